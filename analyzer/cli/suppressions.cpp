#include "suppressions.h"

#include "regular_file.h"

#include <fnmatch.h>
#include <sstream>

namespace gmt::cli {

namespace {

std::string trim(const std::string& s) {
    size_t b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) {
        return {};
    }
    size_t e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

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
    for (const analyzer::Frame& frame : stack) {
        // A Python frame has no module: its source file says where it lives.
        const std::string& where =
            frame.language == analyzer::FrameLanguage::Python ? frame.file : frame.module;
        if (glob(pattern, frame.function) || glob(pattern, withoutParameters(frame.function)) ||
            pathMatches(where)) {
            return true;
        }
        // Python frames by place too: "train.py:*", "*/models/*.py:*", "train.py:42".
        if (frame.language == analyzer::FrameLanguage::Python &&
            pathMatches(frame.file + ":" + std::to_string(frame.line))) {
            return true;
        }
    }
    return false;
}

Suppressions Suppressions::load(const std::string& path) {
    constexpr uint64_t kMaxSize = 16u << 20; // thousands of lines are already unusual
    std::string why;
    std::optional<std::string> text = analyzer::readRegularFile(path, kMaxSize, why);
    if (!text) {
        throw SuppressionError("cannot read suppressions file " + path + ": " + why);
    }
    std::istringstream in(std::move(*text));
    return parse(in, path);
}

Suppressions Suppressions::parse(std::istream& in, const std::string& name) {
    Suppressions out;
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        std::string text = trim(line);
        if (text.empty() || text.front() == '#') {
            continue;
        }
        std::string origin = name + ":" + std::to_string(number);
        size_t colon = text.find(':');
        std::string type = colon == std::string::npos ? std::string() : trim(text.substr(0, colon));
        Suppression s;
        if (type == "leak") {
            s.type = Suppression::Type::Leak;
        } else if (type == "error") {
            s.type = Suppression::Type::Error;
        } else {
            throw SuppressionError(origin + ": expected 'leak:PATTERN' or 'error:PATTERN', got '" +
                                   text + "'");
        }
        s.pattern = trim(text.substr(colon + 1));
        if (s.pattern.empty()) {
            throw SuppressionError(origin + ": empty pattern");
        }
        s.origin = std::move(origin);
        out.entries_.push_back(std::move(s));
    }
    return out;
}

Suppression* Suppressions::matchLeak(const analyzer::LeakSite& leak) {
    for (Suppression& s : entries_) {
        if (s.type == Suppression::Type::Leak && stackMatches(s.pattern, leak.stack)) {
            ++s.uses;
            s.bytes += leak.bytes;
            s.allocations += leak.allocations;
            return &s;
        }
    }
    return nullptr;
}

Suppression* Suppressions::matchError(const analyzer::ErrorReport& error) {
    for (Suppression& s : entries_) {
        if (s.type == Suppression::Type::Error &&
            (stackMatches(s.pattern, error.stack) ||
             stackMatches(s.pattern, error.allocation_stack))) {
            ++s.uses;
            return &s;
        }
    }
    return nullptr;
}

} // namespace gmt::cli
