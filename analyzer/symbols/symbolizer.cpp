#include "symbols/symbolizer.h"

#ifdef GMT_HAVE_DWARF_SYMBOLIZER
#include "symbols/dwarf/dwarf_symbolizer.h"
#endif

namespace gmt::analyzer {

void ModuleOffsetSymbolizer::addModule(const format::ModuleInfo& module) {
    modules_.add(module);
}

const format::ModuleInfo* ModuleOffsetSymbolizer::find(uint64_t address) const {
    std::optional<size_t> id = modules_.find(address);
    return id ? &modules_.module(*id) : nullptr;
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
