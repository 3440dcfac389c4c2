// A live pointer or array allocation as Lifetimes keeps it.
#pragma once

#include "analysis/live_accounting.h"
#include "analysis/phase_tracker.h"

#include <gpumemtrace/format/event.h>

#include <cstdint>

namespace gmt::analyzer {

struct Allocation;

// The allocation's place in the TeardownIndex (its list of allocations a teardown of one
// context on one device would end). The place belongs to the stored allocation, not to
// its value: a copy starts outside every list, and assigning a value leaves the target
// where it was (TeardownIndex moves it).
struct TeardownLink {
    TeardownLink() = default;
    TeardownLink(const TeardownLink&) {}
    TeardownLink& operator=(const TeardownLink&) { return *this; }
    void clear() {
        prev = next = nullptr;
        bucket = nullptr;
    }

    Allocation* prev = nullptr;
    Allocation* next = nullptr;
    void* bucket = nullptr; // null: in no list
};

struct Allocation {
    uint64_t address = 0;
    uint64_t size = 0;   // bytes asked for: what is counted
    uint64_t extent = 0; // address range held (>= size for pitched allocations)
    uint64_t context = 0;
    uint64_t time_ns = 0;
    uint32_t stack = 0;
    int device = -1;
    format::Kind kind = format::Kind::None;
    format::Api api = format::Api::Unknown;
    uint32_t site = kNoSite;   // LiveAccounting's counter for (process, stack)
    uint32_t phase = kNoPhase; // the phase current when it was made (phase_tracker.h)
    uint32_t gaps = 0;         // gaps in the trace before it was allocated (Lifetimes::onGap)
    TeardownLink teardown;
};

} // namespace gmt::analyzer
