// Python frames for the recorder's stacks: finds the interpreter once (at the start of the
// trace), then for each event reads the calling thread's own frames and places them among
// the native frames, each run of Python frames where the native evaluation call that ran
// it (_PyEval_EvalFrameDefault) is. They travel through the stack table as extra words
// after the native frames, marked by the top bit (no user-space return address has it).
#pragma once

#include "code_table.h"
#include "frame_walker.h"
#include "interpreter.h"

#include <gpumemtrace/format/records.h>

#include <atomic>
#include <cstdint>

namespace gmt::preload::python {

class PythonStacks {
  public:
    // Looks for the interpreter; `enabled` is GPUMEMTRACE_PYTHON.
    void start(bool enabled);

    format::PythonStatus status() const { return status_.load(std::memory_order_acquire); }
    uint32_t version() const { return interp_.version; }
    // Whether events may carry Python frames (so a stack is worth capturing even with
    // no native frames). Inline: every traced call asks, Python or not.
    bool active() const {
        const auto s = status();
        return s == format::PythonStatus::Captured || s == format::PythonStatus::Pending;
    }

    // Reads the calling thread's Python frames into `walked` (none: count 0). Read before
    // the native stack, so that they can choose which remembered native stack the unwinder
    // starts from (WalkedFrames::hint).
    void read(WalkedFrames& walked);
    // Places the frames `read` found after the `depth` native frames of `words` (capacity
    // at least depth + kMaxPythonDepth), each run by its evaluation call; returns the new
    // length.
    uint32_t place(const WalkedFrames& walked, uint64_t* words, uint32_t depth,
                   CodeTable::EmitFn emit, void* ctx);

    // Whether the interpreter is finalizing (at exit, freeing what modules still hold).
    bool finalizing() const {
        return interp_.is_finalizing && active() && interp_.is_finalizing() != 0;
    }

    static bool isPythonWord(uint64_t word) { return word >> 63; }
    static format::PythonFrame unpack(uint64_t word);

    std::mutex& mutex() { return codes_.mutex(); }
    void resetCodes() { codes_.reset(); }

  private:
    bool check(uintptr_t tstate);
    void giveUp(format::PythonStatus from, const char* why);

    Interpreter interp_;
    std::atomic<format::PythonStatus> status_{format::PythonStatus::NotDetected};
    std::atomic<uintptr_t> main_interpreter_{0}; // set before status_ becomes Captured
    CodeTable codes_;
};

} // namespace gmt::preload::python
