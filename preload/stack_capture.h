// The unwinder behind one small interface: the caller's stack as return addresses - 1
// (so they point into the calling instruction, which is what symbolizers expect), with
// the tracer's own frames left out.
#pragma once

#include "unwind_cache.h"

#include <cstdint>

namespace gmt::preload {

// Remembers the address range of the tracer's own code. Call once at load time.
void initStackCapture();

// Kinds of call sites whose stacks are remembered apart (below kCaptureSites).
inline constexpr uint32_t kCaptureSites = 4;

// Fills `frames` (capacity `max_depth`) innermost first; returns the depth. `site` says
// which kind of call this is: its previous stacks are remembered apart from other kinds'
// (unwind_cache.h), and `hint` (what the caller knows of where it is called from, such as
// its Python frames) which of them to start from; both change the cost only. `way`, when
// given, receives which remembered stack of the site was taken and the serial of its
// result (unwind::Way; index kNone when the frames were walked without the cache).
uint32_t captureStack(uint64_t* frames, uint32_t max_depth, uint32_t site = 0, uint64_t hint = 0,
                      unwind::Way* way = nullptr);

} // namespace gmt::preload
