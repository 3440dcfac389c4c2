// How `check` and `diff` show and identify the stacks of a report (DESIGN §4 frames).
#pragma once

#include "json.h"

#include <string>
#include <vector>

namespace gmt::cli {

using gmt::analyzer::Json;

// "leak_buffers(unsigned long) at leaky.cpp:12", or "libfoo.so+0x1234" without symbols.
std::string frameText(const Json& frame);

// Up to `max_frames` native frames, innermost first, from the first frame outside the CUDA
// libraries, and every Python frame among them; a last line says how many were left out.
std::vector<std::string> stackLines(const Json& stack, size_t max_frames);

// The frame a reader would call "where it was allocated": the innermost one outside the
// CUDA libraries, since cudaMalloc's own frames are the same for every site.
std::string siteLabel(const Json& stack);

// A stack's identity across runs: its function names, or, for frames without one,
// module basename + offset (addresses move with ASLR, offsets do not).
std::string siteKey(const Json& stack);

// True for frames in libcuda / libcudart / the recorder: the same for every site.
bool isCudaRuntimeFrame(const Json& frame);

} // namespace gmt::cli
