#include "frame_text.h"

#include "record_json.h"

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

std::vector<FrameText> stackText(const Stack& stack, const StackStyle& style) {
    std::vector<FrameText> lines;
    if (stack.empty()) {
        lines.push_back({"(no stack recorded)", ""});
        return lines;
    }
    const bool all_hidden = std::all_of(stack.begin(), stack.end(), hiddenFrame);
    const bool full = style.full || all_hidden;
    size_t shown = 0, more = 0;
    for (const Frame& f : stack) {
        if (!full && hiddenFrame(f)) {
            continue;
        }
        if (shown < style.max_frames) {
            lines.push_back(frameText(f));
            ++shown;
        } else {
            ++more;
        }
    }
    if (more > 0) {
        lines.push_back(
            {"... " + std::to_string(more) + (more == 1 ? " more frame" : " more frames"), ""});
    }
    return lines;
}

std::string siteLabel(const Stack& stack) {
    if (stack.empty()) {
        return "(no stack)";
    }
    for (const Frame& f : stack) {
        if (!hiddenFrame(f)) {
            return frameText(f).str();
        }
    }
    return frameText(stack.front()).str();
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
