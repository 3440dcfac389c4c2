// The built-in leak suppressions of `gpumemtrace check` (docs/configuration.md, "Built-in
// suppressions"): allocations the CUDA libraries make once, by design, for their handles,
// plans and communicators, and keep until those are destroyed — which frameworks do late
// or never (PyTorch's cuBLAS workspaces included, which come from its own caching allocator).
// Each entry says why it is not a leak of the program. `check` tries them after
// the user's suppressions; --no-builtin-suppressions leaves them out and
// --print-builtin-suppressions lists them.
#pragma once

#include "check/suppressions.h"

#include <string>
#include <vector>

namespace gmt::cli {

// The entries, origin "built-in", each with its reason.
std::vector<Suppression> builtinSuppressions();

// The same as a suppressions file, each line after its reason as a comment.
std::string builtinSuppressionsText();

} // namespace gmt::cli
