// Symbolized stacks for the streaming exports: each (process, stack id) is symbolized once
// and kept, up to a bound, so a trace of a billion events with a few thousand distinct
// stacks symbolizes a few thousand times, and one with millions of distinct stacks still
// runs in bounded memory (past the bound the cache starts over).
#pragma once

#include "analysis/analysis.h"
#include "model/report.h"
#include "report/stack_symbolizer.h"

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace gmt::analyzer {

// How an export's frames are made: symbolized or module + offset, and which are the user's
// own (report/own_code.h).
struct FrameSource {
    bool symbols = true;
    UserCodeOptions user_code;
};

class StackCache {
  public:
    StackCache(const Analysis& analysis, const FrameSource& frames)
        : analysis_(analysis), frames_(frames) {}

    // Innermost first; empty for stack 0. Valid until the next call.
    const Stack& frames(uint32_t process, uint32_t stack);

  private:
    static constexpr size_t kMaxCached = 1 << 16;
    const Analysis& analysis_;
    FrameSource frames_;
    std::vector<std::unique_ptr<StackSymbolizer>> symbolizers_; // per process, made on use
    std::unordered_map<uint64_t, Stack> cache_;                 // process << 32 | stack
};

} // namespace gmt::analyzer
