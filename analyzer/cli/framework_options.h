// What `report` and `check` are told about framework programs (docs/configuration.md,
// "Caching allocators" and "Built-in suppressions"): which caching allocator table decides
// what is held at exit rather than leaked, and whether the built-in suppressions of the
// CUDA libraries' one-time allocations apply. Kept apart from the other options so that
// each command adds them with one call.
#pragma once

#include <CLI/CLI.hpp>

#include "analysis/caching/caching_allocators.h"
#include "check/suppressions.h"
#include "model/report.h"
#include "report/report_builder.h"

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace gmt::cli {

struct FrameworkOptions {
    std::string caching_allocators; // a file extending the built-in table
    bool no_builtin_caching_allocators = false;
    bool count_cached = false;             // held memory counts as leaked
    bool print_caching_allocators = false; // print the table in effect, run nothing
    // `report` and `check` (builtin_suppressions.h).
    std::string suppressions; // a file of leak:/error: rules, tried before the built-in ones
    bool no_builtin_suppressions = false;
    bool print_builtin_suppressions = false;
    // Which frames are the user's own (report/own_code.h): `--user-code DIR`, several, or
    // GPUMEMTRACE_USER_CODE=DIR:DIR; empty: the defaults.
    std::vector<std::string> user_code;
};

// Adds --user-code, --caching-allocators, --no-builtin-caching-allocators, --count-cached
// and --print-caching-allocators to `cmd`; with `suppressions` (report, check) also
// --suppressions, --no-builtin-suppressions and --print-builtin-suppressions. Without `print`
// (record
// --check, which runs a command) the --print-* options are left out. Returns what it added.
std::vector<CLI::Option*> addFrameworkOptions(CLI::App* cmd, FrameworkOptions& options,
                                              bool suppressions, bool print = true);

// Adds --user-code DIR (several; DIR:DIR; GPUMEMTRACE_USER_CODE when absent) to `cmd`.
CLI::Option* addUserCodeOption(CLI::App* cmd, std::vector<std::string>& roots);

// The table the options describe; null with --count-cached (held memory is leaked then).
// Throws InputError naming the file and line of a bad table.
std::shared_ptr<const analyzer::CachingAllocatorTable>
cachingAllocatorTable(const FrameworkOptions& options);

// The table the options describe, for --print-caching-allocators (never null).
std::shared_ptr<const analyzer::CachingAllocatorTable>
printedCachingAllocatorTable(const FrameworkOptions& options);

// The suppressions the options name: the file's rules, then the built-in ones unless
// --no-builtin-suppressions. Throws SuppressionError naming a bad file's line.
Suppressions suppressionsOf(const FrameworkOptions& options);

// A leak filter that counts each site's match in `suppressions` (which must outlive it);
// safe to call from several threads (`check` judges traces in parallel). Null when there
// is no rule.
analyzer::LeakFilter leakFilterOf(Suppressions& suppressions);

// Prints what a --print-* option asked for to `out`; false when none was given.
bool printFrameworkTables(const FrameworkOptions& options, std::ostream& out);

} // namespace gmt::cli
