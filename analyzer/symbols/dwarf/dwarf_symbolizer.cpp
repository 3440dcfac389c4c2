#include "symbols/dwarf/dwarf_symbolizer.h"

#include "symbols/dwarf/module_cache.h"
#include "symbols/module_index.h"

#include <optional>
#include <utility>

namespace gmt::analyzer {

std::string_view moduleProblemName(ModuleProblem problem) {
    switch (problem) {
    case ModuleProblem::Missing:
        return "missing";
    case ModuleProblem::Unreadable:
        return "unreadable";
    case ModuleProblem::NotElf:
        return "not an ELF object";
    case ModuleProblem::BuildIdMismatch:
        return "build-id mismatch";
    case ModuleProblem::NoDebugInfo:
        return "no debug info";
    case ModuleProblem::NoSymbols:
        return "no symbols";
    }
    return "unknown";
}

namespace symbolize {
namespace {

// One process's view: which of its modules covers an address, and which shared cache
// entry stands for that module.
class DwarfSymbolizer final : public Symbolizer {
  public:
    explicit DwarfSymbolizer(std::shared_ptr<ModuleCache> cache) : cache_(std::move(cache)) {}

    void addModule(const format::ModuleInfo& module) override {
        auto added = index_.add(module);
        if (added && added->is_new) {
            entries_.resize(added->id + 1);
        }
    }

    std::vector<Frame> symbolize(uint64_t address) override {
        auto id = index_.find(address);
        if (!id) {
            Frame frame;
            frame.address = address;
            return {std::move(frame)};
        }
        const format::ModuleInfo& info = index_.module(*id);
        // The entry is looked up on first use: a trace names every loaded library, but
        // its stacks usually touch only a few of them.
        std::optional<size_t>& entry = entries_[*id];
        if (!entry) {
            entry = cache_->entryFor(info);
        }
        return cache_->symbolize(*entry, info, address);
    }

  private:
    std::shared_ptr<ModuleCache> cache_;
    ModuleIndex index_;
    std::vector<std::optional<size_t>> entries_; // by module id
};

} // namespace
} // namespace symbolize

std::unique_ptr<Symbolizer> makeDwarfSymbolizer(SymbolizeOptions options) {
    return makeDwarfSymbolizer(std::make_shared<symbolize::ModuleCache>(std::move(options)));
}

std::unique_ptr<Symbolizer> makeDwarfSymbolizer(std::shared_ptr<symbolize::ModuleCache> cache) {
    return std::make_unique<symbolize::DwarfSymbolizer>(std::move(cache));
}

} // namespace gmt::analyzer
