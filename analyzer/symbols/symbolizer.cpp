#include "symbols/symbolizer.h"

#include "base/warnings.h"

#ifdef GMT_HAVE_DWARF_SYMBOLIZER
#include "symbols/dwarf/dwarf_symbolizer.h"
#include "symbols/dwarf/module_cache.h"
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

#ifdef GMT_HAVE_DWARF_SYMBOLIZER
namespace {

// One cache for the whole run: every trace of a job names the same objects, and each is
// opened once whatever the number of traces (symbols/dwarf/module_cache.h).
std::shared_ptr<symbolize::ModuleCache> sharedModuleCache() {
    static const std::shared_ptr<symbolize::ModuleCache> cache = [] {
        SymbolizeOptions options;
        // A module file that is there but was refused or unusable (not a regular file, no
        // permission, no descriptor left, not ELF) is said once; one that is simply absent
        // (a trace read on another machine, the vdso) or has no debug info shows in its
        // frames already.
        options.on_problem = [](const format::ModuleInfo&, ModuleProblem problem,
                                std::string_view detail) {
            if (problem == ModuleProblem::Unreadable || problem == ModuleProblem::NotElf) {
                warnOnce("module " + std::string(detail) + "; its frames are module + offset only");
            }
        };
        return std::make_shared<symbolize::ModuleCache>(std::move(options));
    }();
    return cache;
}

} // namespace
#endif

std::unique_ptr<Symbolizer> makeSymbolizer(bool symbols) {
#ifdef GMT_HAVE_DWARF_SYMBOLIZER
    if (symbols) {
        return makeDwarfSymbolizer(sharedModuleCache());
    }
#else
    (void)symbols;
#endif
    return std::make_unique<ModuleOffsetSymbolizer>();
}

} // namespace gmt::analyzer
