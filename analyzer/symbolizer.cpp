#include "symbolizer.h"

#include <algorithm>

#ifdef GMT_HAVE_DWARF_SYMBOLIZER
#include "symbolize/dwarf_symbolizer.h"
#endif

namespace gmt::analyzer {

void ModuleOffsetSymbolizer::addModule(const format::ModuleInfo& module) {
    // A module loaded over an earlier one's range (dlclose + dlopen) replaces it.
    std::erase_if(modules_, [&](const format::ModuleInfo& m) {
        return m.start < module.end && module.start < m.end;
    });
    auto at = std::upper_bound(
        modules_.begin(), modules_.end(), module.start,
        [](uint64_t start, const format::ModuleInfo& m) { return start < m.start; });
    modules_.insert(at, module);
}

const format::ModuleInfo* ModuleOffsetSymbolizer::find(uint64_t address) const {
    auto it = std::upper_bound(modules_.begin(), modules_.end(), address,
                               [](uint64_t a, const format::ModuleInfo& m) { return a < m.start; });
    if (it == modules_.begin()) {
        return nullptr;
    }
    --it;
    return address < it->end ? &*it : nullptr;
}

std::vector<Frame> ModuleOffsetSymbolizer::symbolize(uint64_t address) {
    Frame f;
    f.address = address;
    if (const format::ModuleInfo* m = find(address)) {
        f.module = m->path;
    }
    return {f};
}

bool dwarfSymbolizerAvailable() {
#ifdef GMT_HAVE_DWARF_SYMBOLIZER
    return true;
#else
    return false;
#endif
}

std::unique_ptr<Symbolizer> makeSymbolizer(bool symbols) {
#ifdef GMT_HAVE_DWARF_SYMBOLIZER
    if (symbols) {
        return makeDwarfSymbolizer();
    }
#else
    (void)symbols;
#endif
    return std::make_unique<ModuleOffsetSymbolizer>();
}

} // namespace gmt::analyzer
