// The line files users write for the analyzer (suppressions, the caching allocator table):
// one entry per line, `#` comments and blank lines skipped, each line trimmed and kept with
// its origin ("FILE:LINE") so that an error can name it.
#pragma once

#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

namespace gmt::analyzer {

struct PatternLine {
    std::string text;   // trimmed, never empty
    std::string origin; // "FILE:LINE"
};

// A file that cannot be read: the message names it and says why.
class PatternFileError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// The entry lines of `in`, `name` standing for the file in origins.
std::vector<PatternLine> patternLines(std::istream& in, const std::string& name);

// Those of the file at `path` (a regular file of at most 16 MiB); `what` names the file in
// the error ("suppressions file"). Throws PatternFileError.
std::vector<PatternLine> readPatternFile(const std::string& path, const std::string& what);

// " \t leak: x \r" -> "leak: x".
std::string trimmed(const std::string& s);

} // namespace gmt::analyzer
