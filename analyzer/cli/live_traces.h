// The traces of running processes, for `top`, `snapshot` and `control` (docs/live.md): a
// PID names the trace that process has open, a TRACE or DIR is taken as `report` takes it.
// And what a report made from them while they run must say: that it is a snapshot, and
// which of its processes still run.
#pragma once

#include "model/report.h"
#include "report/report_builder.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gmt::cli {

// Whether `input` is a process id rather than a path: digits only, and no such file.
bool isPidInput(const std::string& input);

// The trace file process `pid` writes: a *.gmtrace it has open (/proc/PID/fd), else one it
// has mapped (/proc/PID/maps). Throws InputError when there is no such process, its
// descriptors cannot be read, or it has no trace open (not traced, or no CUDA call yet).
std::string traceOfProcess(const std::string& pid);

// Each PID replaced by its trace, each directory by the traces under it
// (expandTraceInputs), in input order.
std::vector<std::string> liveTraceInputs(const std::vector<std::string>& inputs);

// Whether process `pid` exists now (kill(pid, 0): a process of another user counts).
bool processExists(uint64_t pid);

// Marks `report` a snapshot taken at `now_wall_ns`: Report::snapshot, and each process's
// `running` (its trace has not ended and its pid exists).
void markSnapshot(analyzer::Report& report, uint64_t now_wall_ns);

// CLOCK_REALTIME in nanoseconds.
uint64_t wallClockNs();

// The report of `traces` as they are now, marked a snapshot (markSnapshot). Throws
// TraceError for a trace that cannot be read at all.
analyzer::Report snapshotOfTraces(const std::vector<std::string>& traces,
                                  const analyzer::ReportOptions& options);

// A period in seconds: "2", "0.5", "2s", "250ms"; unset when not one (or not positive).
std::optional<double> parseSeconds(const std::string& text);
// CLI11's check for such an option.
std::string checkSeconds(const std::string& text);

} // namespace gmt::cli
