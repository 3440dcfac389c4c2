#include "recorder.h"

#include <gpumemtrace.h>

#include <algorithm>
#include <cstring>

using gmt::preload::Recorder;

extern "C" __attribute__((visibility("default"))) void gpumemtrace_mark_phase(const char* name) {
    Recorder::instance().markPhase(name);
}

extern "C" __attribute__((visibility("default"))) void gpumemtrace_push_phase(const char* name) {
    Recorder::instance().markPhase(name, gmt::format::PhaseKind::Push);
}

extern "C" __attribute__((visibility("default"))) void gpumemtrace_pop_phase(void) {
    Recorder::instance().markPhase(nullptr, gmt::format::PhaseKind::Pop);
}

extern "C" __attribute__((visibility("default"))) int gpumemtrace_flush(void) {
    return Recorder::instance().flush() ? 0 : -1;
}

extern "C" __attribute__((visibility("default"))) const char* gpumemtrace_trace_file(void) {
    return Recorder::instance().tracePath();
}

extern "C" __attribute__((visibility("default"))) int gpumemtrace_active(void) {
    return Recorder::instance().active() ? 1 : 0;
}

extern "C" __attribute__((visibility("default"))) int
gpumemtrace_last_popped_phase(struct gpumemtrace_popped_phase* phase, unsigned long size) {
    gmt::preload::PoppedPhase popped;
    if (!phase || !Recorder::instance().lastPoppedPhase(popped)) {
        return -1;
    }
    // The caller's struct may be older (shorter) than ours: only what it has room for.
    gpumemtrace_popped_phase full{popped.slots, popped.dropped};
    std::memcpy(phase, &full, std::min<unsigned long>(size, sizeof full));
    return 0;
}

extern "C" __attribute__((visibility("default"))) int gpumemtrace_account_phases(void) {
    return Recorder::instance().accountPhases() ? 0 : -1;
}

extern "C" __attribute__((visibility("default"))) int
gpumemtrace_last_phase_account(struct gpumemtrace_phase_account* account, unsigned long size) {
    gmt::preload::PhaseAccount a;
    if (!account || !Recorder::instance().lastPhaseAccount(a)) {
        return -1;
    }
    // The caller's struct may be older (shorter) than ours: only what it has room for.
    gpumemtrace_phase_account full{a.unsettled,         a.allocations,        a.frees,
                                   a.live_allocations,  a.live_bytes,         a.peak_increase_bytes,
                                   a.block_allocations, a.block_frees,        a.live_blocks,
                                   a.live_block_bytes,  a.cached_allocations, a.cached_bytes};
    std::memcpy(account, &full, std::min<unsigned long>(size, sizeof full));
    return 0;
}

namespace flags = gmt::preload::account_flags;
static_assert(flags::kOtherEvents == GPUMEMTRACE_ACCOUNT_OTHER_EVENTS &&
              flags::kFreedBefore == GPUMEMTRACE_ACCOUNT_FREED_BEFORE &&
              flags::kMayGrow == GPUMEMTRACE_ACCOUNT_MAY_GROW &&
              flags::kOtherPhases == GPUMEMTRACE_ACCOUNT_OTHER_PHASES &&
              flags::kDropped == GPUMEMTRACE_ACCOUNT_DROPPED &&
              flags::kPaused == GPUMEMTRACE_ACCOUNT_PAUSED &&
              flags::kOverflow == GPUMEMTRACE_ACCOUNT_OVERFLOW &&
              flags::kBlocks == GPUMEMTRACE_ACCOUNT_BLOCKS &&
              flags::kBlocksInexact == GPUMEMTRACE_ACCOUNT_BLOCKS_INEXACT);
