#include "report/stack_symbolizer.h"

#include "read/python_code.h"

#include <algorithm>

namespace gmt::analyzer {

StackSymbolizer::StackSymbolizer(const ProcessData& process, bool symbols,
                                 const UserCodeOptions& user_code)
    : process_(process), symbolizer_(makeSymbolizer(symbols)),
      own_(user_code,
           process.header ? std::string_view(process.header->executable) : std::string_view()) {}

void StackSymbolizer::appendNative(uint64_t address, std::vector<Frame>& frames) {
    // The symbolizer caches per address; the module lookup is a binary search.
    const format::ModuleInfo* m = modules_.find(address);
    for (Frame& f : symbolizer_->symbolize(address)) {
        if (m) {
            f.offset = address - m->base;
        }
        f.own = own_.own(f);
        frames.push_back(std::move(f));
    }
}

const Frame& StackSymbolizer::python(const format::PythonFrame& frame) {
    // A line is found by walking the code's line table: once per (code, instruction).
    const uint64_t key = uint64_t{frame.code_id} << 32 | frame.instruction;
    auto [it, inserted] = python_.try_emplace(key);
    if (inserted) {
        PythonSourceFrame source = resolvePythonFrame(frame, process_.python_code);
        Frame& f = it->second;
        f.language = FrameLanguage::Python;
        f.function = std::move(source.function);
        f.file = std::move(source.file);
        f.line = source.line;
        f.own = own_.own(f);
    }
    return it->second;
}

Stack StackSymbolizer::stack(uint32_t id) {
    auto [it, inserted] = given_.try_emplace(id);
    if (!inserted) {
        if (Stack held(it->second); !held.empty()) {
            return held;
        }
    }
    Stack made(symbolize(id));
    it->second = made.weak();
    if (given_.size() >= prune_at_) {
        std::erase_if(given_, [](const auto& entry) { return entry.second.expired(); });
        prune_at_ = std::max<size_t>(1024, 2 * given_.size());
    }
    return made;
}

std::vector<Frame> StackSymbolizer::symbolize(uint32_t id) {
    for (; modules_added_ < process_.modules.size(); ++modules_added_) {
        symbolizer_->addModule(process_.modules[modules_added_]);
        modules_.addModule(process_.modules[modules_added_]);
    }
    std::vector<Frame> frames;
    auto it = process_.stacks.find(id);
    if (id == 0 || it == process_.stacks.end()) {
        return frames;
    }
    const std::vector<uint64_t>& native = it->second;
    auto py = process_.python_stacks.find(id);
    if (py == process_.python_stacks.end()) {
        for (uint64_t address : native) {
            appendNative(address, frames);
        }
        return frames;
    }
    // Each run of Python frames in place of the evaluation frame that ran it.
    for (const MergedFrame& m : mergeFrames(static_cast<uint32_t>(native.size()), py->second)) {
        if (m.python) {
            frames.push_back(python(py->second[m.index]));
        } else {
            appendNative(native[m.index], frames);
        }
    }
    return frames;
}

} // namespace gmt::analyzer
