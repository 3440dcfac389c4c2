// Source file paths the way CI systems place them: relative to the repository's root.
// GitHub's annotations and code scanning (SARIF) take paths from the root of the checkout;
// debug information has absolute paths from the build machine.
#pragma once

#include "model/report.h"

#include <optional>
#include <string>

namespace gmt::cli {

class SourceRoot {
  public:
    // `root`: a directory; empty: $GITHUB_WORKSPACE when set, else the current directory.
    explicit SourceRoot(const std::string& root = "");

    // `path` relative to the root when it lies inside it; otherwise as it is.
    std::string relative(const std::string& path) const;
    // The root as an absolute directory with a trailing '/'.
    const std::string& directory() const { return root_; }

  private:
    std::string root_;
};

struct SourceLocation {
    std::string file; // relative to the root when inside it
    int line = 0;
    std::string function;
};

// Where a stack points in the source: its first shown frame with a file and a line
// (analyzer::sourceFrame); none when the stack has no such frame.
std::optional<SourceLocation> locate(const analyzer::Stack& stack, const SourceRoot& root);

} // namespace gmt::cli
