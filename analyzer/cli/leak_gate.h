// The verdict of `gpumemtrace check` for one process: its report (DESIGN §4) measured
// against the limits, with suppressions applied. Kept apart from the command so the
// rules can be tested on hand-made reports.
#pragma once

#include "json.h"
#include "suppressions.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gmt::cli {

struct GateLimits {
    uint64_t max_leaked_bytes = 0;
    std::optional<uint64_t> max_leaks;      // leaked allocations
    std::optional<uint64_t> max_peak_bytes; // summary.peak_bytes (device-resident)
    bool fail_on_errors = true;
    // An incomplete trace (process killed, file damaged) says nothing about what came
    // after its valid part, so by default it fails rather than passing unseen.
    bool allow_incomplete = false;
};

struct GateDetail {
    size_t top = 5;    // leak sites / errors shown with their stacks
    size_t frames = 8; // frames per stack
};

// One check ("leaks", "peak", "errors"): a one-line summary and the lines under it.
struct CheckOutcome {
    std::string name;
    bool failed = false;
    std::string summary;
    std::vector<std::string> details;
};

struct ProcessVerdict {
    uint64_t pid = 0;
    std::string command;
    std::string trace_file;
    double duration_s = 0;
    std::vector<std::string> notes;   // incomplete trace, dropped events, OOMs
    std::vector<CheckOutcome> checks; // leaks, peak, errors (+ trace when incomplete)

    bool failed() const;
};

// `report` is the report of exactly one process.
ProcessVerdict evaluateProcess(const Json& report, const GateLimits& limits,
                               Suppressions& suppressions, const GateDetail& detail);

} // namespace gmt::cli
