// Options that name a file (`-o`, `--junit`, `--sarif`, `--suppressions`): an empty value
// is a usage error. Left to the command, `--junit ''` (a script's unset variable) would
// silently write no JUnit file at all, and `report -o ''` would print to the terminal.
#pragma once

#include <CLI/CLI.hpp>

namespace gmt::cli {

// Refuses an empty value with "an empty path is not a file name".
CLI::Validator nonEmptyPath();

} // namespace gmt::cli
