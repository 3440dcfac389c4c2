// The one-line explanation of a failed allocation. Users hit an OOM and need to know
// which of three very different problems they have: asking for more than exists,
// fragmentation, or memory held by someone the trace does not see.
#pragma once

#include <gpumemtrace/format/event.h>

#include <cstdint>
#include <string>

namespace gmt::analyzer {

struct FailureFacts {
    uint64_t requested = 0;
    uint64_t device_total = 0; // 0: unknown
    bool free_known = false;
    uint64_t device_free = 0;
    uint64_t live_bytes = 0;   // what the traced process held on that device then
    uint64_t largest_hole = 0; // in the traced address space, at that moment
};

std::string diagnoseFailure(const format::Event& e, const FailureFacts& facts);

} // namespace gmt::analyzer
