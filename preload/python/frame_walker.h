// The per-event read of the calling thread's own Python frames: plain loads through the
// checked layout, innermost frame first, with the boundaries between the runs of frames
// that each native evaluation call executed. Only the calling thread's frame chain is read;
// it cannot change while the thread is inside the CUDA call that is being recorded.
#pragma once

#include "interpreter.h"

#include <gpumemtrace/format/record_limits.h>

#include <cstdint>

namespace gmt::preload::python {

struct WalkedFrames {
    uint32_t count = 0;                                // frames kept, innermost first
    uintptr_t code[format::kMaxPythonDepth];           // their code objects
    uint32_t instruction[format::kMaxPythonDepth];     // in code units
    uint32_t segments = 0;                             // evaluation calls seen
    uint32_t segment_end[format::kMaxPythonDepth + 1]; // frames kept when each call's run ends
    bool broken = false; // a frame did not hold a code object where the layout says
    // Equal for equal frames (code and instruction), 0 for none: what tells the native
    // unwinder which remembered stack to start from (unwind_cache.h). Taken during the walk,
    // where its multiplies overlap the loads of the next frame instead of costing a pass.
    uint64_t hint = 0;
};

// Reads the frames of `tstate`, which must be the calling thread's own thread state, whose
// layout checkThread passed.
void walkFrames(const Interpreter& interp, uintptr_t tstate, WalkedFrames& out);

} // namespace gmt::preload::python
