// Source-level frames of one address from a module's DWARF: the chain of inlined
// subroutines down to the containing function, each with the source position it was
// executing at. Falls back to the ELF symbol table for the function name.
#pragma once

#include "symbols/dwarf/cu_index.h"
#include "symbols/symbolizer.h"

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <vector>

namespace gmt::analyzer::symbolize {

struct FrameOptions {
    bool demangle = true;
    bool inline_frames = true;
};

// Innermost first, never empty; `address` and `module` are left for the caller. A
// frame with empty function and file means the module knows nothing about `address`.
std::vector<Frame> resolveFrames(Dwfl_Module* module, CuIndex& cus, uint64_t address,
                                 const FrameOptions& options);

} // namespace gmt::analyzer::symbolize
