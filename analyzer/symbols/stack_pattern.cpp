#include "symbols/stack_pattern.h"

#include <fnmatch.h>

namespace gmt::analyzer {

namespace {

bool glob(const std::string& pattern, const std::string& text) {
    return !text.empty() && ::fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

} // namespace

std::string withoutParameters(const std::string& function) {
    int depth = 0;
    for (size_t i = 0; i < function.size(); ++i) {
        char c = function[i];
        if (c == '<') {
            ++depth;
        } else if (c == '>' && depth > 0) {
            --depth;
        } else if (c == '(' && depth == 0) {
            // "operator()(int)": the first pair of parentheses is the name.
            if (i >= 8 && function.compare(i - 8, 8, "operator") == 0 &&
                function.compare(i, 2, "()") == 0) {
                ++i;
                continue;
            }
            return function.substr(0, i);
        }
    }
    return function;
}

bool stackMatches(const std::string& pattern, const Stack& stack) {
    auto pathMatches = [&](const std::string& path) {
        const size_t slash = path.rfind('/');
        return glob(pattern, path) ||
               (slash != std::string::npos && glob(pattern, path.substr(slash + 1)));
    };
    for (const Frame& frame : stack) {
        // A Python frame has no module: its source file says where it lives.
        const std::string& where =
            frame.language == FrameLanguage::Python ? frame.file : frame.module;
        if (glob(pattern, frame.function) || glob(pattern, withoutParameters(frame.function)) ||
            pathMatches(where)) {
            return true;
        }
        // Python frames by place too: "train.py:*", "*/models/*.py:*", "train.py:42".
        if (frame.language == FrameLanguage::Python &&
            pathMatches(frame.file + ":" + std::to_string(frame.line))) {
            return true;
        }
    }
    return false;
}

} // namespace gmt::analyzer
