// The CI gate of `gpumemtrace check`, shared with `gpumemtrace record --check`: its options
// and its verdict over a set of traces (defined in check_command.cpp).
#pragma once

#include <CLI/CLI.hpp>

#include "cli/framework_options.h"
#include "views/styled_text.h"

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace gmt::cli {

struct CheckOptions {
    uint64_t max_leaked_bytes = 0;
    std::optional<uint64_t> max_leaks;
    std::optional<uint64_t> max_peak_bytes;
    std::optional<uint64_t> max_peak_increase; // with a phase (leak_gate.h)
    std::optional<uint64_t> max_growth;        // bytes per iteration (leak_gate.h)
    std::optional<std::string> phase;          // the limits apply to this phase (leak_gate.h)
    std::optional<std::string> iteration;      // the phase name that begins iterations
    bool fail_on_errors = true;
    bool allow_incomplete = false;
    std::string junit;
    unsigned jobs = 0;           // traces analysed at once; 0: one per core
    std::string format = "text"; // text, json or github (what goes to the output stream)
    std::string sarif;           // also write SARIF 2.1.0 to this file
    std::string source_root;     // paths in annotations and SARIF are relative to it
    size_t top = 5;
    size_t frames = 8;
    bool full_stacks = false;
    bool python_only = false;
    bool no_symbols = false;
    FrameworkOptions frameworks; // caching allocators, suppressions
};

// Adds the gate's options (--max-leaked-bytes ... --no-symbols) to `cmd`, storing into
// `options`; returns them, so a command can group them or make them need a flag.
std::vector<CLI::Option*> addCheckOptions(CLI::App* cmd, CheckOptions& options);

// Analyses every trace (or reads every saved JSON report), writes one verdict per process
// and the totals to `out` in `style` (and the JUnit file when asked). Returns kExitOk when
// every limit holds, kExitNotOk otherwise; throws InputError or SuppressionError on
// unusable input.
int runCheckGate(const std::vector<std::string>& traces, const CheckOptions& options,
                 std::ostream& out, const analyzer::TextStyle& style);

} // namespace gmt::cli
