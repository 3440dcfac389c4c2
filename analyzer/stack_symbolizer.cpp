#include "stack_symbolizer.h"

namespace gmt::analyzer {

StackSymbolizer::StackSymbolizer(const ProcessData& process, bool symbols)
    : process_(process), symbolizer_(makeSymbolizer(symbols)) {
    for (const auto& m : process.modules) {
        symbolizer_->addModule(m);
        modules_.addModule(m);
    }
}

std::vector<Frame> StackSymbolizer::stack(uint32_t id) {
    std::vector<Frame> frames;
    auto it = process_.stacks.find(id);
    if (id == 0 || it == process_.stacks.end()) {
        return frames;
    }
    for (uint64_t address : it->second) {
        // The symbolizer caches per address; the module lookup is a binary search.
        const format::ModuleInfo* m = modules_.find(address);
        for (Frame& f : symbolizer_->symbolize(address)) {
            if (m) {
                f.offset = address - m->base;
            }
            frames.push_back(std::move(f));
        }
    }
    return frames;
}

} // namespace gmt::analyzer
