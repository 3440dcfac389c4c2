// Which frames are the user's own code: the line a person fixes. Every view leads a stack
// with its innermost own frame (views/frame_text.h) and labels a site by it, so a tensor
// leak reads `step at train.py:16`, not the caching allocator's `malloc` twenty frames in.
//
// By default (no roots given):
// - a Python frame is own unless it is the standard library (a file under
//   .../lib/python3.X/), an installed package (under site-packages or dist-packages) or
//   frozen bootstrap code (`<frozen ...>`);
// - a native frame is own when its module or its source file lies under the traced
//   program's directory, unless the program is an interpreter (python3.12: its frames are
//   the interpreter's, never the user's).
// With roots (`--user-code DIR`, several; GPUMEMTRACE_USER_CODE=DIR:DIR), a frame is own
// exactly when its file (Python) or its module or source file (native) lies under one of
// them. The recorder's and the CUDA libraries' frames and libc start-up are never own
// (runtimeFrame).
#pragma once

#include "model/frame.h"

#include <string>
#include <string_view>
#include <vector>

namespace gmt::analyzer {

// The recorder's own frames, the CUDA libraries' (libcuda, libcudart: the same in every
// stack), the CUDA headers' inline wrappers (`cudaMalloc<float>` in cuda_runtime.h) and
// libc start-up (`__libc_start_*`, `_start`): frames that say nothing about a site.
bool runtimeFrame(const Frame& frame);

// What the user said about their code (report, check and export options).
struct UserCodeOptions {
    std::vector<std::string> roots;       // `--user-code`; empty: the defaults above
    std::vector<std::string> extra_roots; // added to whichever roots apply (--source-root)
};

class OwnCode {
  public:
    // `executable`: the traced program (HeaderInfo::executable), whose directory is the
    // default root for native frames.
    OwnCode(const UserCodeOptions& options, std::string_view executable);

    bool own(const Frame& frame) const;

  private:
    bool underRoot(std::string_view path) const;

    std::vector<std::string> roots_;
    bool explicit_roots_ = false;
};

} // namespace gmt::analyzer
