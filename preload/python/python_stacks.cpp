#include "python_stacks.h"

#include "../logging.h"
#include "frame_walker.h"
#include "plain_load.h"

namespace gmt::preload::python {
namespace {

// A Python frame as one word: marker bit 63, position (9 bits: 0..256), instruction offset
// (22 bits, saturated), code id (32 bits).
constexpr uint64_t kMarker = uint64_t{1} << 63;
constexpr uint32_t kMaxInstruction = (1u << 22) - 1;

uint64_t pack(uint32_t code_id, uint32_t instruction, uint32_t position) {
    instruction = instruction < kMaxInstruction ? instruction : kMaxInstruction;
    return kMarker | uint64_t{position & 0x1ff} << 54 | uint64_t{instruction} << 32 | code_id;
}

} // namespace

format::PythonFrame PythonStacks::unpack(uint64_t word) {
    format::PythonFrame f;
    f.code_id = static_cast<uint32_t>(word);
    f.instruction = static_cast<uint32_t>(word >> 32) & kMaxInstruction;
    f.position = static_cast<uint32_t>(word >> 54) & 0x1ff;
    return f;
}

void PythonStacks::start(bool enabled) {
    interp_ = detectInterpreter(enabled);
    status_.store(interp_.status, std::memory_order_release);
    if (interp_.status != format::PythonStatus::Pending) {
        return;
    }
    logger().info("CPython {:#x} found: Python frames will be recorded", interp_.version);
    // The trace starts on a CUDA call, usually from a thread running Python: checked
    // there, the trace's header can already say whether frames are read.
    auto tstate = reinterpret_cast<uintptr_t>(interp_.this_thread_state());
    if (tstate != 0 && !interp_.is_finalizing()) {
        check(tstate);
    }
}

// Stops reading for the rest of the run, saying why once (whichever thread sees it first).
void PythonStacks::giveUp(format::PythonStatus from, const char* why) {
    if (status_.compare_exchange_strong(from, format::PythonStatus::Failed)) {
        logger().warn("CPython {:#x}: {}", interp_.version, why);
    }
}

// Checks the layout on this thread with faultless reads, once per process: until then
// nothing is read the fast way. A thread without frames leaves the question open.
bool PythonStacks::check(uintptr_t tstate) {
    switch (checkThread(interp_, tstate)) {
    case Check::Passed: {
        main_interpreter_.store(reinterpret_cast<uintptr_t>(interp_.main_interpreter()),
                                std::memory_order_relaxed);
        auto expected = format::PythonStatus::Pending;
        status_.compare_exchange_strong(expected, format::PythonStatus::Captured);
        return status() == format::PythonStatus::Captured;
    }
    case Check::Failed:
        giveUp(format::PythonStatus::Pending, "its thread state or frames are not laid out as "
                                              "expected; Python frames are not recorded");
        return false;
    case Check::NothingToCheck:
        return false;
    }
    return false;
}

void PythonStacks::read(WalkedFrames& walked) {
    walked.count = 0;
    walked.segments = 0;
    walked.hint = 0;
    auto s = status();
    if (s != format::PythonStatus::Captured && s != format::PythonStatus::Pending) {
        return;
    }
    auto tstate = reinterpret_cast<uintptr_t>(interp_.this_thread_state());
    // A thread that never ran Python has no thread state; at exit the interpreter frees
    // the thread states of threads still running, so none is read then.
    if (tstate == 0 || interp_.is_finalizing()) {
        return;
    }
    if (s == format::PythonStatus::Pending && !check(tstate)) {
        return;
    }
    // A thread state of another interpreter: its frames are not this one's to read.
    if (load<uintptr_t>(tstate + interp_.layout.tstate_interp) !=
        main_interpreter_.load(std::memory_order_relaxed)) {
        return;
    }
    walkFrames(interp_, tstate, walked);
    if (walked.broken) {
        giveUp(format::PythonStatus::Captured,
               "a frame without a code object; Python frames are no longer recorded");
        walked.count = 0;
        walked.segments = 0;
        walked.hint = 0;
    }
}

uint32_t PythonStacks::place(const WalkedFrames& walked, uint64_t* words, uint32_t depth,
                             CodeTable::EmitFn emit, void* ctx) {
    // Each native evaluation frame, innermost first, takes the next run of Python frames;
    // runs left over (the native stack was cut short) go after the last native frame.
    if (walked.count == 0) {
        return depth; // no Python frames (none read, or not asked for): nothing to look up
    }
    uint32_t ids[format::kMaxPythonDepth];
    codes_.intern(interp_, walked, ids, emit, ctx);
    uint32_t segment = 0, first = 0, out = depth;
    auto place = [&](uint32_t position) {
        const uint32_t end = walked.segment_end[segment++];
        for (; first < end; ++first) {
            if (ids[first] != 0) {
                words[out++] = pack(ids[first], walked.instruction[first], position);
            }
        }
    };
    if (interp_.eval_end != 0) {
        for (uint32_t i = 0; i < depth && segment < walked.segments; ++i) {
            if (words[i] >= interp_.eval_begin && words[i] < interp_.eval_end) {
                place(i);
            }
        }
    }
    while (segment < walked.segments) {
        place(depth);
    }
    return out;
}

} // namespace gmt::preload::python
