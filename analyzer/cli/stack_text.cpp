#include "stack_text.h"

#include <algorithm>

namespace gmt::cli {

namespace {

std::string str(const Json& frame, const char* key) {
    auto it = frame.find(key);
    return it != frame.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string basename(const std::string& path) {
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

std::string frameText(const Json& frame) {
    std::string function = str(frame, "function");
    std::string file = str(frame, "file");
    std::string where;
    if (!file.empty()) {
        where = basename(file);
        auto line = frame.find("line");
        if (line != frame.end() && line->is_number() && line->get<int64_t>() > 0) {
            where += ":" + std::to_string(line->get<int64_t>());
        }
    }
    std::string out;
    if (!function.empty()) {
        out = function;
        if (!where.empty()) {
            out += " at " + where;
        }
    } else {
        std::string module = basename(str(frame, "module"));
        std::string offset = str(frame, "offset");
        out = module.empty() ? str(frame, "address")
                             : module + "+" + (offset.empty() ? str(frame, "address") : offset);
        if (!where.empty()) {
            out += " at " + where;
        }
    }
    auto inlined = frame.find("inlined");
    if (inlined != frame.end() && inlined->is_boolean() && inlined->get<bool>()) {
        out += " (inlined)";
    }
    return out;
}

std::vector<std::string> stackLines(const Json& stack, size_t max_frames) {
    std::vector<std::string> lines;
    if (!stack.is_array() || stack.empty()) {
        lines.push_back("(no stack recorded; GPUMEMTRACE_STACK_DEPTH=0?)");
        return lines;
    }
    // cudaMalloc's own frames are the same for every site; start where the program is.
    size_t first = 0;
    while (first < stack.size() && isCudaRuntimeFrame(stack[first])) {
        ++first;
    }
    if (first == stack.size()) {
        first = 0;
    }
    // Up to max_frames native frames; Python frames (the program's own lines) always.
    size_t native = 0, hidden = 0;
    for (size_t i = first; i < stack.size(); ++i) {
        const bool python = str(stack[i], "language") == "python";
        if (!python && native++ >= max_frames) {
            ++hidden;
            continue;
        }
        lines.push_back(frameText(stack[i]));
        // What lies below the native main (libc start-up) is the same for every stack.
        if (!python && str(stack[i], "function") == "main") {
            return lines;
        }
    }
    if (hidden > 0) {
        lines.push_back("... " + std::to_string(hidden) + " more frames");
    }
    return lines;
}

bool isCudaRuntimeFrame(const Json& frame) {
    std::string module = basename(str(frame, "module"));
    return module.rfind("libcuda.so", 0) == 0 || module.rfind("libcudart", 0) == 0 ||
           module.rfind("libgpumemtrace", 0) == 0;
}

std::string siteLabel(const Json& stack) {
    if (!stack.is_array() || stack.empty()) {
        return "(no stack)";
    }
    for (const Json& frame : stack) {
        if (!isCudaRuntimeFrame(frame)) {
            return frameText(frame);
        }
    }
    return frameText(stack.front());
}

std::string siteKey(const Json& stack) {
    std::string key;
    if (!stack.is_array()) {
        return key;
    }
    for (const Json& frame : stack) {
        std::string function = str(frame, "function");
        if (function.empty()) {
            std::string offset = str(frame, "offset");
            function = basename(str(frame, "module")) + "+" +
                       (offset.empty() ? str(frame, "address") : offset);
        }
        key += function;
        key += '\n';
    }
    return key;
}

} // namespace gmt::cli
