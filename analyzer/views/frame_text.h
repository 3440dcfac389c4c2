// How every text output (the text report, `check`, `diff`, `record`'s summary) writes a
// stack: one frame per line, innermost first, with the same frames left out everywhere.
//
// Own code first: a stack with an own frame (Frame::own, report/own_code.h) begins with
// the innermost one, the line a person fixes; then one line saying how it got to CUDA
// ("via torch.nn.modules.linear.forward → DeviceCachingAllocator::malloc"); then the own
// frames that called it, the library frames between them counted in one line. Sites are
// labelled by that frame. `--full-stacks` shows every frame as recorded.
//
// Hidden unless StackStyle::full (`--full-stacks`): frames of the recorder itself
// (libgpumemtrace) and of the CUDA libraries (libcuda, libcudart: the same for every
// site), the CUDA headers' inline wrappers (`cudaMalloc<float>` from cuda_runtime.h) and
// libc start-up (`__libc_start_*`, `_start`). A stack with nothing else is shown whole.
// Python frames are never hidden and never counted against the frame limit: they are the
// program's own lines, usually past the native frames of the CUDA call and the binding.
// Native frames left out between shown ones leave a line saying how many.
// The JSON report keeps every frame; views decide with hiddenFrame().
#pragma once

#include "model/report.h"

#include <string>
#include <string_view>
#include <vector>

namespace gmt::analyzer {

struct StackStyle {
    bool full = false; // show hidden frames too
    // `--python-only`: of the native frames, only the frame that made the CUDA call and,
    // when the stack has it, the CUDA function it called; every Python frame.
    bool python_only = false;
    size_t max_frames = 8; // native frames shown per stack (hidden ones not counted)
};

// A frame as text, in two parts so a narrow terminal can shorten `what` (a long C++
// signature) and keep `where`: "cache_activations(...)" + " at train.cpp:7".
struct FrameText {
    std::string what;  // function, or module+offset / address when not symbolized
    std::string where; // " at FILE:LINE", " (inlined)"; may be empty
    std::string str() const { return what + where; }
};

bool hiddenFrame(const Frame& frame);

// The innermost own frame; null when the stack has none (then views show it as before:
// the frames past the hidden ones).
const Frame* ownFrame(const Stack& stack);

// How the own frame's call reached CUDA: "via A → B", A the innermost library Python frame
// inside it (dotted as its package names it), B the frame that made the CUDA call (its
// function, or its module when not symbolized). Empty when the own frame made the call.
std::string viaText(const Stack& stack);

// A C++ function without its parameters and all but its last two qualifiers:
// "c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char,
// unsigned long)" -> "DeviceCachingAllocator::malloc". Short labels (the via line, the HTML
// timeline's legend) name a C++ site by it.
std::string shortFunction(std::string_view name);

// The frames a flame graph or folded stack shows, innermost first: from the innermost own
// frame outwards, own frames only; shownFrames() with `full` or when there is no own frame.
std::vector<const Frame*> userFrames(const Stack& stack, bool full);

// The frames a view shows, innermost first: all of them with `full`, else those not
// hidden (all of them again when every frame is hidden).
std::vector<const Frame*> shownFrames(const Stack& stack, bool full);

FrameText frameText(const Frame& frame);

// The lines for one stack: its shown frames, then a line saying how many more there
// are; "(no stack recorded)" for an empty one.
std::vector<FrameText> stackText(const Stack& stack, const StackStyle& style);

// The frame a reader would call "where it was allocated": the innermost own frame; without
// one, the first shown frame, and in a stack with Python frames the innermost Python frame
// "via" that native one.
std::string siteLabel(const Stack& stack);

// The frame a source annotation points at: the innermost own frame with a file and line,
// else the first shown frame with them; null when the stack has none (not symbolized, no
// debug information).
const Frame* sourceFrame(const Stack& stack);

// A stack's identity across runs: function names (Python: function and file), or, for
// frames without one, module basename + offset (addresses move with ASLR, offsets do not).
std::string siteKey(const Stack& stack);

} // namespace gmt::analyzer
