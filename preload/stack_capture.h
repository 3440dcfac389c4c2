// The unwinder behind one small interface: the caller's stack as return addresses - 1
// (so they point into the calling instruction, which is what symbolizers expect), with
// the tracer's own frames left out.
#pragma once

#include <cstdint>

namespace gmt::preload {

// Remembers the address range of the tracer's own code. Call once at load time.
void initStackCapture();

// Fills `frames` (capacity `max_depth`) innermost first; returns the depth.
uint32_t captureStack(uint64_t* frames, uint32_t max_depth);

} // namespace gmt::preload
