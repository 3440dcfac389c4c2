#include "views/frame_text.h"

#include "base/hex.h"

#include <algorithm>

namespace gmt::analyzer {

namespace {

std::string_view basename(std::string_view path) {
    const size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool startsWith(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

std::string moduleOffset(const Frame& f) {
    if (f.module.empty()) {
        return hex(f.address);
    }
    return std::string(basename(f.module)) + "+" + hex(f.offset ? *f.offset : f.address);
}

} // namespace

bool hiddenFrame(const Frame& f) {
    if (f.language != FrameLanguage::Native) {
        return false;
    }
    const std::string_view module = basename(f.module);
    const std::string_view file = basename(f.file);
    return startsWith(module, "libgpumemtrace") || startsWith(module, "libcuda.so") ||
           startsWith(module, "libcudart") || file == "cuda_runtime.h" ||
           file == "cuda_runtime_api.h" || startsWith(f.function, "__libc_start_") ||
           f.function == "_start";
}

namespace {

// Hidden frames are shown when asked for, and when the stack has nothing else.
bool showHidden(const Stack& stack, bool full) {
    return full || std::all_of(stack.begin(), stack.end(), hiddenFrame);
}

} // namespace

std::vector<const Frame*> shownFrames(const Stack& stack, bool full) {
    full = showHidden(stack, full);
    std::vector<const Frame*> shown;
    shown.reserve(stack.size());
    for (const Frame& f : stack) {
        if (full || !hiddenFrame(f)) {
            shown.push_back(&f);
        }
    }
    return shown;
}

FrameText frameText(const Frame& f) {
    FrameText t;
    t.what = f.function.empty() ? moduleOffset(f) : f.function;
    if (!f.file.empty()) {
        // Native files by name (the JSON report has the path); Python files whole, since
        // their names repeat (__init__.py) and their paths say which package.
        t.where =
            " at " + (f.language == FrameLanguage::Python ? f.file : std::string(basename(f.file)));
        if (f.line > 0) {
            t.where += ":" + std::to_string(f.line);
        }
    }
    if (f.inlined) {
        t.where += " (inlined)";
    }
    return t;
}

namespace {

std::string frameCount(size_t n, const char* what) {
    return "... " + std::to_string(n) + what + (n == 1 ? " frame" : " frames");
}

// The frame that made the CUDA call: the first one past the hidden native frames the stack
// starts with (the recorder's, the CUDA libraries': when the recorder hooked a driver call
// under the runtime, the runtime's frames come first; when it hooked the called function
// itself, there are none).
size_t cudaCallerIndex(const Stack& stack) {
    size_t i = 0;
    while (i < stack.size() && hiddenFrame(stack[i])) {
        ++i;
    }
    return i;
}

const Frame* firstShown(const Stack& stack) {
    for (const Frame& f : stack) {
        if (!hiddenFrame(f) && f.language == FrameLanguage::Native) {
            return &f;
        }
    }
    return nullptr;
}

} // namespace

std::vector<FrameText> stackText(const Stack& stack, const StackStyle& style) {
    std::vector<FrameText> lines;
    if (stack.empty()) {
        lines.push_back({"(no stack recorded)", ""});
        return lines;
    }
    const bool full = showHidden(stack, style.full);
    // --python-only: the caller and, when the stack has it, the CUDA function it called.
    const size_t caller = style.python_only ? cudaCallerIndex(stack) : 0;
    size_t native_shown = 0, left_out = 0;
    for (size_t i = 0; i < stack.size(); ++i) {
        const Frame& f = stack[i];
        const bool kept = f.language == FrameLanguage::Python ||
                          (style.python_only && (i == caller || i + 1 == caller));
        if (!kept && !full && hiddenFrame(f)) {
            continue; // the same in every stack: not worth a line
        }
        const bool shown = kept || (!style.python_only && native_shown < style.max_frames);
        if (!shown) {
            ++left_out;
            continue;
        }
        if (left_out > 0) {
            lines.push_back({frameCount(left_out, " native"), ""});
            left_out = 0;
        }
        native_shown += f.language == FrameLanguage::Native ? 1 : 0;
        lines.push_back(frameText(f));
    }
    if (left_out > 0) {
        lines.push_back({frameCount(left_out, " more"), ""});
    }
    return lines;
}

std::string siteLabel(const Stack& stack) {
    if (stack.empty()) {
        return "(no stack)";
    }
    const Frame* native = firstShown(stack);
    for (const Frame& f : stack) {
        if (f.language == FrameLanguage::Python) {
            return frameText(f).str() + (native ? " via " + frameText(*native).str() : "");
        }
    }
    return frameText(native ? *native : stack.front()).str();
}

const Frame* sourceFrame(const Stack& stack) {
    for (const Frame& f : stack) {
        if (!hiddenFrame(f) && !f.file.empty() && f.line > 0) {
            return &f;
        }
    }
    return nullptr;
}

std::string siteKey(const Stack& stack) {
    std::string key;
    for (const Frame& f : stack) {
        if (f.language == FrameLanguage::Python) {
            key += f.function + " " + f.file;
        } else {
            key += f.function.empty() ? moduleOffset(f) : f.function;
        }
        key += '\n';
    }
    return key;
}

} // namespace gmt::analyzer
