#include "views/frame_text.h"

#include "base/hex.h"
#include "base/path_name.h"
#include "report/own_code.h"

#include <algorithm>

namespace gmt::analyzer {

namespace {

std::string moduleOffset(const Frame& f) {
    if (f.module.empty()) {
        return hex(f.address);
    }
    return std::string(fileName(f.module)) + "+" + hex(f.offset ? *f.offset : f.address);
}

} // namespace

bool hiddenFrame(const Frame& f) {
    return runtimeFrame(f);
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
            " at " + (f.language == FrameLanguage::Python ? f.file : std::string(fileName(f.file)));
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

size_t ownIndex(const Stack& stack) {
    const Frame* own = ownFrame(stack);
    return own ? static_cast<size_t>(own - stack.data()) : stack.size();
}

// A library's Python function as its package names it: ".../site-packages/torch/nn/
// modules/linear.py" + "forward" -> "torch.nn.modules.linear.forward".
std::string dottedPython(const Frame& f) {
    std::string_view path = f.file;
    for (std::string_view root : {"/site-packages/", "/dist-packages/"}) {
        if (size_t at = path.rfind(root); at != std::string_view::npos) {
            path = path.substr(at + root.size());
            break;
        }
    }
    if (path.size() == f.file.size()) { // the standard library: from lib/python3.X/
        if (size_t at = path.find("/python3"); at != std::string_view::npos) {
            const size_t next = path.find('/', at + 1);
            path = next == std::string_view::npos ? fileName(path) : path.substr(next + 1);
        } else {
            path = fileName(path);
        }
    }
    std::string module(path.substr(0, path.size() - (path.ends_with(".py") ? 3 : 0)));
    std::replace(module.begin(), module.end(), '/', '.');
    if (module.ends_with(".__init__")) {
        module.resize(module.size() - 9);
    }
    return module.empty() ? f.function : module + "." + f.function;
}

// viaText() of a stack whose innermost own frame is stack[own] (none: stack.size()).
std::string viaAt(const Stack& stack, size_t own) {
    if (own == stack.size()) {
        return {};
    }
    std::vector<std::string> parts;
    for (size_t i = 0; i < own; ++i) {
        if (stack[i].language == FrameLanguage::Python) {
            parts.push_back(dottedPython(stack[i]));
            break;
        }
    }
    if (const size_t caller = cudaCallerIndex(stack); caller < own) {
        const Frame& f = stack[caller];
        parts.push_back(f.function.empty()
                            ? std::string(fileName(f.module.empty() ? moduleOffset(f) : f.module))
                            : shortFunction(f.function));
    }
    std::string via;
    for (const std::string& part : parts) {
        via += (via.empty() ? "via " : " \u2192 ") + part;
    }
    return via;
}

// The own frame, how it reached CUDA, then its own callers; library frames between and
// after them are counted, not shown.
std::vector<FrameText> ownFirstText(const Stack& stack, size_t own, size_t max_frames) {
    std::vector<FrameText> lines{frameText(stack[own])};
    if (std::string via = viaAt(stack, own); !via.empty()) {
        lines.push_back({"  " + via, ""});
    }
    size_t shown = 0, library = 0, left_out = 0;
    for (size_t i = own + 1; i < stack.size(); ++i) {
        const Frame& f = stack[i];
        if (!f.own) {
            library += hiddenFrame(f) ? 0 : 1;
            continue;
        }
        // Python frames are never left out (as in every stack): they are the program's lines.
        if (shown == max_frames && f.language == FrameLanguage::Native) {
            ++left_out;
            continue;
        }
        if (library > 0) {
            lines.push_back({frameCount(library, " library"), ""});
            library = 0;
        }
        lines.push_back(frameText(f));
        shown += f.language == FrameLanguage::Native ? 1 : 0;
    }
    if (library + left_out > 0) {
        lines.push_back({frameCount(library + left_out, " more"), ""});
    }
    return lines;
}

} // namespace

std::vector<FrameText> stackText(const Stack& stack, const StackStyle& style) {
    std::vector<FrameText> lines;
    if (stack.empty()) {
        lines.push_back({"(no stack recorded)", ""});
        return lines;
    }
    if (const size_t own = ownIndex(stack);
        own < stack.size() && !style.full && !style.python_only) {
        return ownFirstText(stack, own, style.max_frames);
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
    if (const Frame* own = ownFrame(stack)) {
        return frameText(*own).str();
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
        if (f.own && !f.file.empty() && f.line > 0) {
            return &f;
        }
    }
    for (const Frame& f : stack) {
        if (!hiddenFrame(f) && !f.file.empty() && f.line > 0) {
            return &f;
        }
    }
    return nullptr;
}

const Frame* ownFrame(const Stack& stack) {
    for (const Frame& f : stack) {
        if (f.own) {
            return &f;
        }
    }
    return nullptr;
}

std::string viaText(const Stack& stack) {
    return viaAt(stack, ownIndex(stack));
}

std::string shortFunction(std::string_view name) {
    int depth = 0;
    size_t end = name.size();
    for (size_t i = 0; i < name.size(); ++i) {
        const char c = name[i];
        depth += c == '<' || c == '(' ? 1 : c == '>' || c == ')' ? -1 : 0;
        if (c == '(' && depth == 1 && i > 0) {
            end = i;
            break;
        }
    }
    name = name.substr(0, end);
    size_t cut = 0, qualifiers = 0;
    depth = 0;
    for (size_t i = name.size(); i-- > 1;) {
        const char c = name[i];
        depth += c == '>' ? 1 : c == '<' ? -1 : 0;
        if (depth == 0 && c == ':' && name[i - 1] == ':' && ++qualifiers == 2) {
            cut = i + 1;
            break;
        }
    }
    return std::string(name.substr(cut));
}

std::vector<const Frame*> userFrames(const Stack& stack, bool full) {
    const size_t own = ownIndex(stack);
    if (full || own == stack.size()) {
        return shownFrames(stack, full);
    }
    std::vector<const Frame*> frames;
    for (size_t i = own; i < stack.size(); ++i) {
        if (stack[i].own) {
            frames.push_back(&stack[i]);
        }
    }
    return frames;
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
