#include "symbols/dwarf/dwarf_symbolizer.h"

#include "symbols/dwarf/dwarf_frames.h"
#include "symbols/dwarf/elf_module.h"
#include "symbols/module_index.h"

#include <unordered_map>
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

// A frame that says only where the address is: the module (if any) and the address.
std::vector<Frame> addressOnly(uint64_t address, std::string module) {
    Frame frame;
    frame.address = address;
    frame.module = std::move(module);
    return {std::move(frame)};
}

class DwarfSymbolizer final : public Symbolizer {
  public:
    explicit DwarfSymbolizer(SymbolizeOptions options)
        : options_(std::move(options)), settings_(std::make_unique<DwflSettings>(options_)) {}

    void addModule(const format::ModuleInfo& module) override {
        auto added = index_.add(module);
        if (!added || !added->is_new) {
            return;
        }
        opened_.resize(added->id + 1);
        // The new module may take over addresses already answered (a library loaded where
        // an unloaded one was); this is rare enough to start the cache over.
        cache_.clear();
    }

    std::vector<Frame> symbolize(uint64_t address) override {
        if (auto it = cache_.find(address); it != cache_.end()) {
            return it->second;
        }
        // Bounded: a report that matches suppressions against every stack of a trace
        // asks for every address once; the cache serves the repeats of a working set.
        if (cache_.size() >= kMaxCached) {
            cache_.clear();
        }
        return cache_.emplace(address, resolve(address)).first->second;
    }

  private:
    std::vector<Frame> resolve(uint64_t address) {
        auto id = index_.find(address);
        if (!id) {
            return addressOnly(address, {});
        }
        const format::ModuleInfo& info = index_.module(*id);
        ElfModule& elf = open(*id);
        if (elf.handle() == nullptr) {
            std::string name = info.path;
            if (elf.buildIdMismatch()) {
                name += kBuildIdMismatchSuffix;
            }
            return addressOnly(address, std::move(name));
        }
        std::vector<Frame> frames = resolveFrames(
            elf.handle(), elf.cus(), address,
            FrameOptions{.demangle = options_.demangle, .inline_frames = options_.inline_frames});
        for (Frame& frame : frames) {
            frame.address = address;
            frame.module = info.path;
        }
        return frames;
    }

    // Opened on first use: a trace names every loaded library, but its stacks usually
    // touch only a few of them.
    ElfModule& open(size_t id) {
        std::unique_ptr<ElfModule>& slot = opened_[id];
        if (!slot) {
            const format::ModuleInfo& info = index_.module(id);
            slot = std::make_unique<ElfModule>(info, *settings_);
            if (slot->problem() && options_.on_problem) {
                options_.on_problem(info, *slot->problem(), slot->problemDetail());
            }
        }
        return *slot;
    }

    static constexpr size_t kMaxCached = 1u << 16;

    SymbolizeOptions options_;
    std::unique_ptr<DwflSettings> settings_; // libdwfl keeps pointers into it
    ModuleIndex index_;
    std::vector<std::unique_ptr<ElfModule>> opened_; // by module id; null until used
    std::unordered_map<uint64_t, std::vector<Frame>> cache_;
};

} // namespace
} // namespace symbolize

std::unique_ptr<Symbolizer> makeDwarfSymbolizer(SymbolizeOptions options) {
    return std::make_unique<symbolize::DwarfSymbolizer>(std::move(options));
}

} // namespace gmt::analyzer
