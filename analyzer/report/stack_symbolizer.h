// The stacks of one traced process as source-level frames: a stack id of the trace in,
// its frames out (symbolized with the process's modules, each frame given its offset in
// its module; Python frames, when the stack has any, resolved to function, file and line
// and placed among the native frames where the interpreter ran them). Only the stacks a
// view lists are ever asked for.
#pragma once

#include "analysis/analysis.h"
#include "report/own_code.h"
#include "symbols/symbolizer.h"

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

namespace gmt::analyzer {

class StackSymbolizer {
  public:
    // Frames come out marked Frame::own as `user_code` says (report/own_code.h).
    StackSymbolizer(const ProcessData& process, bool symbols,
                    const UserCodeOptions& user_code = {});

    // Innermost first; empty for stack 0 (none recorded) or an id the trace never defined.
    // Modules the process recorded since the last call are taken in first, so a view that
    // streams while the trace is read symbolizes with every module recorded so far. While a
    // stack given out is still held (by the report being built), asking again gives the same
    // frames, shared, not another copy.
    Stack stack(uint32_t id);

  private:
    std::vector<Frame> symbolize(uint32_t id);
    void appendNative(uint64_t address, std::vector<Frame>& frames);
    const Frame& python(const format::PythonFrame& frame);

    const ProcessData& process_;
    std::unique_ptr<Symbolizer> symbolizer_;
    ModuleOffsetSymbolizer modules_;
    OwnCode own_;
    std::unordered_map<uint64_t, Frame> python_; // by code id << 32 | instruction
    size_t modules_added_ = 0;
    // Stacks given out, by id, not kept alive here: a report that judges a million sites and
    // lists five holds five. Entries whose stacks are gone are dropped each time the table
    // doubles.
    std::unordered_map<uint32_t, Stack::Weak> given_;
    size_t prune_at_ = 1024;
};

} // namespace gmt::analyzer
