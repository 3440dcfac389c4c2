#include "stack_symbolizer.h"

namespace gmt::analyzer {

StackSymbolizer::StackSymbolizer(const ProcessData& process, bool symbols)
    : process_(process), symbolizer_(makeSymbolizer(symbols)) {}

std::vector<Frame> StackSymbolizer::stack(uint32_t id) {
    for (; modules_added_ < process_.modules.size(); ++modules_added_) {
        symbolizer_->addModule(process_.modules[modules_added_]);
        modules_.addModule(process_.modules[modules_added_]);
    }
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
