// A change to the live bytes, as the lifetimes (lifetimes.h) hand it to the accounting
// (live_accounting.h), and the level a peak reached: shared by the accounting and the
// thread it may run on (accounting_thread.h).
#pragma once

#include <gpumemtrace/format/event.h>

#include <cstdint>

namespace gmt::analyzer {

// What one allocation contributes: where it lives and who made it.
struct Charge {
    uint32_t process = 0;
    uint32_t stack = 0;
    int device = -1;
    format::Kind kind = format::Kind::None;
    bool resident = true; // device memory (not pinned host, not a host-located VMM handle)
    uint64_t bytes = 0;
    // The (process, stack) counter's index when the caller knows it (what add() returned
    // for this allocation); kNoSite: look it up.
    uint32_t site = UINT32_MAX;
};
inline constexpr uint32_t kNoSite = UINT32_MAX;

struct PeakPoint {
    uint64_t bytes = 0;
    uint64_t time_ns = 0;
};

} // namespace gmt::analyzer
