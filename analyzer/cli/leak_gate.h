// The verdict of `gpumemtrace check` for one process (or one saved report): its typed
// report measured against the limits, with error suppressions applied (leak
// suppressions are applied when the report is made: analyzer::ReportOptions::leak_filter).
// Kept apart from the command so the rules can be tested on hand-made reports.
#pragma once

#include "frame_text.h"
#include "report.h"
#include "suppressions.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gmt::cli {

struct GateLimits {
    uint64_t max_leaked_bytes = 0;
    std::optional<uint64_t> max_leaks;      // leaked allocations
    std::optional<uint64_t> max_peak_bytes; // device-resident bytes at the peak
    // The leak and peak limits apply to this phase (its leaks: the report's leak scope;
    // its peak: the phase's); a phase never marked fails the gate.
    std::optional<std::string> phase;
    bool fail_on_errors = true;
    // An incomplete trace (process killed, file damaged) says nothing about what came
    // after its valid part, so by default it fails rather than passing unseen.
    bool allow_incomplete = false;
};

struct GateDetail {
    size_t top = 5; // leak sites / errors shown with their stacks
    analyzer::StackStyle stacks;
};

// A line under a check; `where` (a frame's file:line) is kept when a terminal is narrow.
using DetailLine = analyzer::FrameText;

// One check ("leaks", "peak", "errors", ...): a one-line summary and the lines under it.
struct CheckOutcome {
    std::string name;
    bool failed = false;
    std::string summary;
    std::vector<DetailLine> details;
};

struct ProcessVerdict {
    uint64_t pid = 0;
    std::string command;
    std::string trace_file;
    double duration_s = 0;
    std::vector<std::string> notes;   // incomplete trace, dropped events, OOMs
    std::vector<CheckOutcome> checks; // [phase,] leaks, peak, errors (+ trace when incomplete)

    bool failed() const;
};

// `report` is the report of one process (a saved report of several is judged as one).
ProcessVerdict evaluateProcess(const analyzer::Report& report, const GateLimits& limits,
                               Suppressions& suppressions, const GateDetail& detail);

} // namespace gmt::cli
