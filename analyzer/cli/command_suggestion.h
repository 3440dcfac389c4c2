// A mistyped command (`gpumemtrace reprot`): CLI11 would say "a subcommand is required",
// which hides the typo. The name is refused in one line that names the command meant.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace gmt::cli {

// The number of single-character insertions, deletions, substitutions and swaps of two
// neighbours that turn `a` into `b` (optimal string alignment distance).
size_t editDistance(std::string_view a, std::string_view b);

// The registered command closest to `typed` (at most two edits, and fewer than half its
// letters, so that `x` suggests nothing); unset when none is that close.
std::optional<std::string> nearestCommand(const CLI::App& app, std::string_view typed);

// When argv names no command where one is expected (argv[1] is not an option and no
// command's name), the one-line error for it; unset otherwise.
std::optional<std::string> unknownCommandError(const CLI::App& app, int argc, char** argv);

} // namespace gmt::cli
