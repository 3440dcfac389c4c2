// The verdict of `gpumemtrace check` for one process (or one saved report): its typed
// report measured against the limits, with error suppressions applied (leak
// suppressions are applied when the report is made: analyzer::ReportOptions::leak_filter).
// Kept apart from the command so the rules can be tested on hand-made reports.
#pragma once

#include "check/suppressions.h"
#include "model/report.h"
#include "views/frame_text.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gmt::cli {

struct GateLimits {
    uint64_t max_leaked_bytes = 0;
    std::optional<uint64_t> max_leaks;      // leaked allocations
    std::optional<uint64_t> max_peak_bytes; // device-resident bytes at the peak
    // With a phase: the most its device memory may rise above the level it began at.
    std::optional<uint64_t> max_peak_increase;
    // Bytes per iteration that growing allocation sites may add, summed (the report's
    // growth scope); unset: growth is noted, never failed.
    std::optional<uint64_t> max_growth;
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

// What a check points at in the program (a leaking allocation site, a growing one, a bad
// free): for CI annotations and SARIF, which place them on a source line.
struct Finding {
    std::string rule;    // "leak", "growth", "peak", "double_free", ...
    std::string message; // one line
    uint64_t bytes = 0;  // leaked, per iteration, or held at the peak; 0 for errors
    // The judged report's own stack, not a copy: a verdict is used while its report lives
    // (runCheckGate keeps every report until its outputs are written), and a copy per
    // finding cost gigabytes for a hundred thousand sites at a large --top.
    const analyzer::Stack* stack = nullptr;
};

// One check ("leaks", "peak", "errors", ...): a one-line summary and the lines under it.
struct CheckOutcome {
    std::string name;
    bool failed = false;
    std::string summary;
    std::vector<DetailLine> details;
    std::optional<uint64_t> value; // what was measured (bytes, or a count for errors)
    std::optional<uint64_t> limit; // what it was held to; unset: no limit
    std::vector<Finding> findings; // the sites behind it, as listed in the details
};

struct ProcessVerdict {
    uint64_t pid = 0;
    std::optional<int64_t> rank;
    std::string host;
    std::string command;
    std::string trace_file;
    double duration_s = 0;
    std::vector<std::string> notes; // incomplete trace, dropped events, OOMs
    // [phase,] leaks, peak, [peak increase,] [growth,] errors (+ trace when incomplete)
    std::vector<CheckOutcome> checks;

    bool failed() const;
};

// A name for a verdict that stays the same from run to run (JUnit, SARIF): the command
// line, with " rank N" for a rank; no pid, no trace file name.
std::string stableName(const ProcessVerdict& v);

// `report` is the report of one process (a saved report of several is judged as one).
ProcessVerdict evaluateProcess(const analyzer::Report& report, const GateLimits& limits,
                               Suppressions& suppressions, const GateDetail& detail);

// When the phase's peak increase was first reached (the occurrence that rose most), if the
// report says.
std::optional<uint64_t> peakIncreaseTime(const analyzer::Report& report, const std::string& phase);

// A failed peak-increase check of `verdict` lists what held the increase: `then` is the
// report of the same trace read only up to peakIncreaseTime() with the phase's leak scope,
// so its leaks are what the phase had allocated and still held at that moment (with
// suppressions and caching allocators applied as everywhere). Its findings point at
// `then`'s stacks, which must outlive the verdict.
void addPeakIncreaseHolders(ProcessVerdict& verdict, const analyzer::Report& then,
                            const GateDetail& detail);

} // namespace gmt::cli
