// The stacks of one traced process as source-level frames: a stack id of the trace in,
// its frames out (symbolized with the process's modules, each frame given its offset in
// its module). Only the stacks a view lists are ever asked for.
#pragma once

#include "analysis.h"
#include "symbolizer.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace gmt::analyzer {

class StackSymbolizer {
  public:
    StackSymbolizer(const ProcessData& process, bool symbols);

    // Innermost first; empty for stack 0 (none recorded) or an id the trace never defined.
    std::vector<Frame> stack(uint32_t id);

  private:
    const ProcessData& process_;
    std::unique_ptr<Symbolizer> symbolizer_;
    ModuleOffsetSymbolizer modules_;
};

} // namespace gmt::analyzer
