// The caching allocator table: which allocation stacks belong to an allocator that keeps
// freed memory for reuse (PyTorch's caching allocator, CuPy's pool, XLA's BFC allocator,
// RMM's pools). Memory such an allocator still holds when its process ends is its cache,
// not a leak of the program: the report lists it as "held by NAME at exit"
// (docs/analysis.md, "Held by a caching allocator at exit").
//
// The built-in entries are documented in docs/analysis.md; a user file extends or overrides
// them (docs/configuration.md, "Caching allocators"):
//
//   # comment
//   NAME: PATTERN      one more pattern for the entry NAME (made when new); PATTERN as in
//                      analyzer/symbols/stack_pattern.h. An entry of the file named like a built-in
//                      one replaces the built-in entry's patterns.
//   -NAME              drops the entry NAME (built-in or not)
#pragma once

#include "symbols/pattern_file.h"
#include "symbols/symbolizer.h"

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace gmt::analyzer {

struct CachingAllocator {
    std::string name;
    std::vector<std::string> patterns; // any frame matching any pattern
    std::string why;                   // what makes it a cache (built-in entries)
    std::string origin;                // "built-in" or FILE:LINE of its first line
};

class CachingAllocatorTable {
  public:
    // The documented default (docs/analysis.md).
    static std::shared_ptr<const CachingAllocatorTable> builtin();

    // Adds the lines of a user file to this table; throws PatternFileError naming the line
    // of anything it cannot parse.
    void extend(const std::vector<PatternLine>& lines);

    // The first entry with a pattern matching a frame of `stack`, or null.
    const CachingAllocator* match(const Stack& stack) const;

    const std::vector<CachingAllocator>& entries() const { return entries_; }
    bool empty() const { return entries_.empty(); }

    // The table in the file syntax, each entry with its reason as a comment.
    std::string text() const;

  private:
    std::vector<CachingAllocator> entries_;
};

} // namespace gmt::analyzer
