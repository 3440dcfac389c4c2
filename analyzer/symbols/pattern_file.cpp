#include "symbols/pattern_file.h"

#include "base/regular_file.h"

#include <sstream>

namespace gmt::analyzer {

std::string trimmed(const std::string& s) {
    size_t b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) {
        return {};
    }
    size_t e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
}

std::vector<PatternLine> patternLines(std::istream& in, const std::string& name) {
    std::vector<PatternLine> out;
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        std::string text = trimmed(line);
        if (text.empty() || text.front() == '#') {
            continue;
        }
        out.push_back({std::move(text), name + ":" + std::to_string(number)});
    }
    return out;
}

std::vector<PatternLine> readPatternFile(const std::string& path, const std::string& what) {
    constexpr uint64_t kMaxSize = 16u << 20; // thousands of lines are already unusual
    std::string why;
    std::optional<std::string> text = readRegularFile(path, kMaxSize, why);
    if (!text) {
        throw PatternFileError("cannot read " + what + " " + path + ": " + why);
    }
    std::istringstream in(std::move(*text));
    return patternLines(in, path);
}

} // namespace gmt::analyzer
