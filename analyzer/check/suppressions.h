// Suppressions for `gpumemtrace check`: known leaks and errors that must not fail CI.
//
//   # comment
//   leak:PATTERN     a leak whose allocation stack has a matching frame
//   error:PATTERN    an error whose call stack or allocation stack has a matching frame
//
// PATTERN is an fnmatch(3) glob tried on every frame's function name (as demangled, and
// without its parameter list, so `leak:init_cache` matches `init_cache(unsigned long)`)
// and module path (full, and basename, so `leak:libfoo.so*` works). A Python frame has no
// module: its source file takes its place, alone and as FILE:LINE (full path and basename),
// so `leak:train.py:*` covers every line of train.py, `leak:train.py:42` one line, and
// `leak:Model.step` a Python function by its name. The first matching line in the file
// takes the match; uses are counted so stale lines can be removed.
#pragma once

#include "model/report.h"
#include "symbols/pattern_file.h"
#include "symbols/stack_pattern.h"

#include <cstdint>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

namespace gmt::cli {

using analyzer::Stack;

struct Suppression {
    enum class Type { Leak, Error };
    Type type;
    std::string pattern;
    std::string origin; // "FILE:LINE", for messages; "built-in" (builtin_suppressions.h)
    std::string why;    // a built-in entry's reason
    uint64_t uses = 0;  // leak sites or errors matched
    uint64_t bytes = 0; // leaked bytes matched
    uint64_t allocations = 0;

    std::string text() const { return (type == Type::Leak ? "leak:" : "error:") + pattern; }
};

class SuppressionError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

class Suppressions {
  public:
    // Throws SuppressionError naming the file and line of anything it cannot parse.
    static Suppressions load(const std::string& path);
    static Suppressions parse(std::istream& in, const std::string& name);

    // The suppression that covers a leak site (counted), or nullptr.
    Suppression* matchLeak(const analyzer::LeakSite& leak);
    // The suppression that covers an error (counted), or nullptr.
    Suppression* matchError(const analyzer::ErrorReport& error);

    // Appends entries tried after those already here (the built-in ones after the file's).
    void add(std::vector<Suppression> more);

    const std::vector<Suppression>& entries() const { return entries_; }
    bool empty() const { return entries_.empty(); }

  private:
    static Suppressions fromLines(const std::vector<analyzer::PatternLine>& lines);

    std::vector<Suppression> entries_;
};

// The leak rules that matched, most bytes first, as the report lists them
// (Report::suppressions).
std::vector<analyzer::SuppressionReport> usedLeakSuppressions(const Suppressions& suppressions);

// The patterns' syntax and matching (analyzer/symbols/stack_pattern.h).
using analyzer::stackMatches;
using analyzer::withoutParameters;

} // namespace gmt::cli
