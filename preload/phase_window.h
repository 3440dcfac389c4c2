// What the trace holds between a thread's push of a phase and the pop that closes it
// (gpumemtrace_last_popped_phase in include/gpumemtrace.h), from the ring positions the two
// Phase records took: every record of every thread that the trace places between them took
// a position between them (RingBuffer::claim hands positions out in one total order, the
// order the reader keeps), so their difference counts the slots those records took: 0
// exactly when there was none. Events dropped take no
// position: the ring's drop count, read before the push is claimed and after the pop is,
// counts the ones that may fall between.
//
// Nothing here runs on the allocation path: only the Phase records of the thread update it,
// in thread-local state.
#pragma once

#include <cstdint>

namespace gmt::preload {

struct PoppedPhase {
    uint64_t slots = 0; // ring slots taken by records between the push and the pop
    uint64_t dropped = 0;
};

namespace phase_window {

// A push of this thread: `dropped_before` read before its record claimed [first, end), or
// `recorded` false when it could not be recorded.
void pushed(bool recorded, uint64_t end, uint64_t dropped_before);
// A pop of this thread, its record claimed at `first` (`recorded` false: not recorded);
// `dropped_after` read after the claim.
void popped(bool recorded, uint64_t first, uint64_t dropped_after);
// The window of this thread's last push, once a pop right after it closed it; false when
// the last push or pop of this thread was not such a pop.
bool lastPopped(PoppedPhase& out);
// A forked child's thread starts with no window.
void reset();

} // namespace phase_window
} // namespace gmt::preload
