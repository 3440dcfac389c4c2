// Stack patterns: the glob a suppression line (analyzer/check/suppressions.h) or an entry of
// the caching allocator table (caching_allocators.h) gives, tried on each frame of a stack.
//
// PATTERN is an fnmatch(3) glob tried on every frame's function name (as demangled, and
// without its parameter list, so `init_cache` matches `init_cache(unsigned long)`) and module
// path (full, and basename, so `libfoo.so*` works). A Python frame has no module: its source
// file takes its place, alone and as FILE:LINE (full path and basename), so `train.py:*`
// covers every line of train.py, `train.py:42` one line, and `Model.step` a Python function
// by its name.
#pragma once

#include "symbols/symbolizer.h"

#include <string>
#include <vector>

namespace gmt::analyzer {

// Whether any frame of `stack` matches the glob (see the file comment).
bool stackMatches(const std::string& pattern, const Stack& stack);

// "ns::f<int>(int) const" -> "ns::f<int>": the name users write in a pattern.
std::string withoutParameters(const std::string& function);

} // namespace gmt::analyzer
