// The report: the typed result of an analysis, the one thing every view reads (the text
// report, the JSON report, `check`, `diff`, `record`'s summary). A leaf: it names no
// engine type, so views, saved reports and the gate compile without the analysis.
// report/report_builder.h builds it from a finished Analysis; report/report_json.h writes
// it as JSON and reads saved JSON back.
// Every field here has a JSON field of the same name in docs/report.schema.json. The
// GMT_DESCRIBE after each struct lists its fields once (model/describe.h), in declaration
// order, which is the JSON order: the JSON writer and reader follow the lists, and
// tests/analyzer/report_fields_test.cpp checks them against the schema.
#pragma once

#include "model/describe.h"
#include "model/error_type.h"
#include "model/frame.h"
#include "model/moment.h"
#include "model/whatif.h"

#include <gpumemtrace/format/event.h>
#include <gpumemtrace/format/records.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gmt::analyzer {

inline constexpr int kReportSchemaVersion = 1;

// One Phase record of a process (gpumemtrace.h, NVTX ranges), in time order.
struct PhaseMarker {
    uint64_t time_ns = 0;
    std::string name; // the phase it began; for a pop, the one it ended ("" when none was open)
    format::PhaseKind kind = format::PhaseKind::Mark;
    uint64_t tid = 0; // the thread that wrote it (nesting is per thread)
    // That phase's path, outermost first (ends with `name`; empty for a pop that ended
    // nothing). Reports saved before nesting existed have [name].
    std::vector<std::string> path;
};
GMT_DESCRIBE(PhaseMarker, GMT_MEMBER(time_ns), GMT_MEMBER(name), GMT_MEMBER(kind, kOptional),
             GMT_MEMBER(tid, kOptional), GMT_MEMBER(path, kOptional))

// The CPython a process ran, as its trace's header and trailer say (docs/python.md).
struct PythonRuntime {
    std::string version; // "3.12.3"; empty when not known
    // At the end of the trace when it has a trailer (a failed check shows only there).
    format::PythonStatus status = format::PythonStatus::NotDetected;
};
GMT_DESCRIBE(PythonRuntime, GMT_MEMBER(version), GMT_MEMBER(status))

// Where events are missing from a trace (docs/analysis.md, "Missing events").
struct MissingRangeReport {
    uint64_t first_position = 0;
    uint64_t positions = 0;
    uint64_t after_time_ns = 0;  // the latest event before the gap (0: none)
    uint64_t before_time_ns = 0; // the event right after it (0: not an event)
};
GMT_DESCRIBE(MissingRangeReport, GMT_MEMBER(first_position), GMT_MEMBER(positions),
             GMT_MEMBER(after_time_ns), GMT_MEMBER(before_time_ns))

struct MissingEventsReport {
    uint64_t dropped_events = 0;    // drop mode: lost at points the trace does not record
    uint64_t missing_positions = 0; // over every gap
    uint64_t gap_count = 0;
    std::vector<MissingRangeReport> gaps; // the first ones (AnalysisOptions::max_listed)
    bool unknown_tail = false;            // a damaged log with nothing after it
    uint64_t unrecorded_frees = 0;        // ended by an allocation made over them
};
GMT_DESCRIBE(MissingEventsReport, GMT_MEMBER(dropped_events), GMT_MEMBER(missing_positions),
             GMT_MEMBER(gap_count), GMT_MEMBER(gaps), GMT_MEMBER(unknown_tail),
             GMT_MEMBER(unrecorded_frees, kOptional))

// One change of recording in a process (docs/live.md): a pause or a resume.
struct RecordingChangeReport {
    uint64_t time_ns = 0;
    std::string change; // "pause" or "resume"
    std::string cause;  // "start" (GPUMEMTRACE_START=paused) or "control" (`gpumemtrace control`)
};
GMT_DESCRIBE(RecordingChangeReport, GMT_MEMBER(time_ns), GMT_MEMBER(change), GMT_MEMBER(cause))

// Recording was paused in a process: what it did meanwhile is not in its trace, so an
// allocation made then is never seen, and its free later is no error (counted in `frees`).
struct PausedReport {
    bool started_paused = false; // GPUMEMTRACE_START=paused
    bool paused_at_end = false;  // the last change was a pause
    uint64_t paused_ns = 0;      // time spent paused, summed (to the end of the trace)
    uint64_t frees = 0;          // frees, releases, unmaps of memory made while paused or before
    std::vector<RecordingChangeReport> changes; // in time order (capped)
};
GMT_DESCRIBE(PausedReport, GMT_MEMBER(started_paused), GMT_MEMBER(paused_at_end),
             GMT_MEMBER(paused_ns), GMT_MEMBER(frees), GMT_MEMBER(changes))

// An aggregated trace (GPUMEMTRACE_MODE=aggregate, docs/configuration.md): what the recorder
// folded instead of keeping. Leaks, the peak and its holders, growth and failures are exact
// while over_budget, folded_errors and folded_phases are 0.
struct AggregateReport {
    uint64_t events = 0;             // recorded, kept or folded
    uint64_t kept_events = 0;        // in the trace, replayed by the analysis
    uint64_t folded_allocations = 0; // allocated and freed at no moment the report shows
    uint64_t folded_bytes = 0;
    uint64_t folded_errors = 0; // error events past the recorder's bound: counted only
    uint64_t folded_phases = 0; // phase marks past the recorder's bound: counted only
    uint64_t over_budget = 0;   // events the last checkpoint had no room for
    uint64_t budget_bytes = 0;  // of one checkpoint
};
GMT_DESCRIBE(AggregateReport, GMT_MEMBER(events), GMT_MEMBER(kept_events),
             GMT_MEMBER(folded_allocations), GMT_MEMBER(folded_bytes), GMT_MEMBER(folded_errors),
             GMT_MEMBER(folded_phases), GMT_MEMBER(over_budget), GMT_MEMBER(budget_bytes))

struct ProcessReport {
    uint64_t pid = 0;
    std::string command;
    // The recorder kept only the start of a longer command line (format::kMaxHeaderCommand).
    bool command_truncated = false;
    std::string trace_file;
    bool complete = true;
    uint64_t events = 0;
    uint64_t dropped_events = 0;
    uint64_t duration_ns = 0;
    uint64_t ppid = 0;
    std::string executable;
    std::string host;
    uint64_t start_mono_ns = 0;
    uint64_t start_wall_ns = 0;
    uint64_t driver_version = 0;
    uint64_t allocations = 0;
    uint64_t frees = 0;
    uint64_t failed_allocations = 0;
    uint64_t errors = 0;
    uint64_t leaked_bytes = 0;
    uint64_t recovered_records = 0;
    // The job rank from the launcher's environment; unset when not launched as a rank.
    std::optional<int64_t> rank;
    std::optional<int64_t> exit_signal; // died of this signal (the trace is still complete)
    std::optional<std::string> incomplete_reason;
    std::optional<uint64_t> valid_log_end_offset;
    // The recorder could not write the trace, or had no host memory for an aggregated
    // trace's tables, and stopped tracing (its prologue says so; incomplete_reason: which).
    bool log_failed = false;
    // Calls that had not returned when the trace ended; their events are not in it.
    std::optional<uint64_t> in_flight_calls;
    std::vector<PhaseMarker> phases; // markers in time order (capped, see AnalysisOptions)
    uint64_t end_mono_ns = 0;        // when its allocations ended: trailer, else its last event
    // Its own device-resident bytes at most (whatever other processes held then), in all
    // and per device (ordinal, bytes), ordinals ascending. 0 / empty in older reports.
    uint64_t peak_bytes = 0;
    std::vector<std::pair<int64_t, uint64_t>> device_peaks;
    // Unset when the trace saw no CPython (or an older tracer wrote it): then no stack of
    // the process has Python frames, and nothing needs saying.
    std::optional<PythonRuntime> python;
    // Set when events are missing: its leak and error figures are then partly uncertain.
    std::optional<MissingEventsReport> missing_events;
    // Set when recording was paused at some time (docs/live.md).
    std::optional<PausedReport> paused;
    // A snapshot's (Report::snapshot): whether the process was still running when it was
    // taken. Unset in a report of finished traces.
    std::optional<bool> running;
    // Set for an aggregated trace.
    std::optional<AggregateReport> aggregate;
};
GMT_DESCRIBE(ProcessReport, GMT_MEMBER(pid), GMT_MEMBER(command),
             GMT_MEMBER(command_truncated, kOmitted), GMT_MEMBER(trace_file), GMT_MEMBER(complete),
             GMT_MEMBER(events), GMT_MEMBER(dropped_events), GMT_MEMBER(duration_ns),
             GMT_MEMBER(ppid, kOptional), GMT_MEMBER(executable, kOptional),
             GMT_MEMBER(host, kOptional), GMT_MEMBER(start_mono_ns, kOptional),
             GMT_MEMBER(start_wall_ns, kOptional), GMT_MEMBER(driver_version, kOptional),
             GMT_MEMBER(allocations, kOptional), GMT_MEMBER(frees, kOptional),
             GMT_MEMBER(failed_allocations, kOptional), GMT_MEMBER(errors, kOptional),
             GMT_MEMBER(leaked_bytes, kOptional), GMT_MEMBER(recovered_records, kOptional),
             GMT_MEMBER(rank, kOptional), GMT_MEMBER(exit_signal, kOmitted),
             GMT_MEMBER(incomplete_reason, kOmitted), GMT_MEMBER(valid_log_end_offset, kOmitted),
             GMT_MEMBER(log_failed, kOmitted), GMT_MEMBER(in_flight_calls, kOmitted),
             GMT_MEMBER(phases, kOptional), GMT_MEMBER(end_mono_ns, kOptional),
             GMT_MEMBER(peak_bytes, kOptional),
             GMT_MEMBER(device_peaks, kOptional, FieldCodec::DevicePeak),
             GMT_MEMBER(python, kOmitted), GMT_MEMBER(missing_events, kOmitted),
             GMT_MEMBER(paused, kOmitted), GMT_MEMBER(running, kOmitted),
             GMT_MEMBER(aggregate, kOmitted))

struct Summary {
    uint64_t allocations = 0;
    uint64_t frees = 0;
    uint64_t failed_allocations = 0;
    uint64_t errors = 0;
    uint64_t leaked_bytes = 0;
    uint64_t leaked_allocations = 0;
    uint64_t peak_bytes = 0;
    uint64_t peak_time_ns = 0;
    uint64_t leak_groups = 0;
    uint64_t teardown_released_bytes = 0;
    // Of the errors and leaked bytes, those that missing events could explain.
    uint64_t uncertain_errors = 0;
    uint64_t uncertain_leaked_bytes = 0;
    // Still live at the end but held by a caching allocator (Report::held_at_exit): not
    // in the leaked figures.
    uint64_t held_at_exit_bytes = 0;
    uint64_t held_at_exit_allocations = 0;
};
GMT_DESCRIBE(Summary, GMT_MEMBER(allocations), GMT_MEMBER(frees), GMT_MEMBER(failed_allocations),
             GMT_MEMBER(errors), GMT_MEMBER(leaked_bytes), GMT_MEMBER(leaked_allocations),
             GMT_MEMBER(peak_bytes), GMT_MEMBER(peak_time_ns), GMT_MEMBER(leak_groups, kOptional),
             GMT_MEMBER(teardown_released_bytes, kOptional),
             GMT_MEMBER(uncertain_errors, kOptional), GMT_MEMBER(uncertain_leaked_bytes, kOptional),
             GMT_MEMBER(held_at_exit_bytes, kOptional),
             GMT_MEMBER(held_at_exit_allocations, kOptional))

struct KindReport {
    format::Kind kind = format::Kind::Device;
    uint64_t allocations = 0;
    uint64_t peak_bytes = 0;
    uint64_t leaked_bytes = 0;
    uint64_t leaked_allocations = 0;
    uint64_t largest_allocation_bytes = 0; // the largest single allocation of this kind
};
GMT_DESCRIBE(KindReport, GMT_MEMBER(kind, kKey), GMT_MEMBER(allocations), GMT_MEMBER(peak_bytes),
             GMT_MEMBER(leaked_bytes), GMT_MEMBER(leaked_allocations),
             GMT_MEMBER(largest_allocation_bytes, kOptional))

struct DeviceReport {
    int64_t ordinal = 0;
    std::string name;
    uint64_t total_bytes = 0;
    uint64_t peak_bytes = 0;
    uint64_t peak_time_ns = 0;
    uint64_t leaked_bytes = 0;
    uint64_t granularity = 0;
};
GMT_DESCRIBE(DeviceReport, GMT_MEMBER(ordinal), GMT_MEMBER(name), GMT_MEMBER(total_bytes),
             GMT_MEMBER(peak_bytes), GMT_MEMBER(peak_time_ns), GMT_MEMBER(leaked_bytes),
             GMT_MEMBER(granularity, kOptional))

// Leaked allocations of one process grouped by (stack, kind, API, released by teardown).
struct LeakSite {
    uint64_t bytes = 0;
    uint64_t allocations = 0;
    format::Kind kind = format::Kind::Device;
    std::string api;
    Stack stack;
    bool released_by_teardown = false;
    uint64_t pid = 0;
    uint64_t stack_id = 0;
    // Of `bytes`, allocated before events went missing: their free may be among them.
    uint64_t uncertain_bytes = 0;
    uint64_t uncertain_allocations = 0;
};
GMT_DESCRIBE(LeakSite, GMT_MEMBER(bytes), GMT_MEMBER(allocations), GMT_MEMBER(kind),
             GMT_MEMBER(api), GMT_MEMBER(stack), GMT_MEMBER(released_by_teardown, kOptional),
             GMT_MEMBER(pid, kOptional), GMT_MEMBER(stack_id, kOptional),
             GMT_MEMBER(uncertain_bytes, kOptional), GMT_MEMBER(uncertain_allocations, kOptional))

// What the `leaks` list covers and how much lies beyond it. Without a phase and a filter
// it equals the summary's leak figures; `check` narrows it (a phase, suppressions).
struct LeakScope {
    std::optional<std::string> phase; // only allocations made while this phase was current
    uint64_t bytes = 0;               // in scope and not suppressed (listed or not)
    uint64_t allocations = 0;
    uint64_t sites = 0;
    uint64_t suppressed_bytes = 0;
    uint64_t suppressed_allocations = 0;
    uint64_t suppressed_sites = 0;
    // Of `bytes` and `allocations`, those missing events could explain.
    uint64_t uncertain_bytes = 0;
    uint64_t uncertain_allocations = 0;
};
GMT_DESCRIBE(LeakScope, GMT_MEMBER(phase), GMT_MEMBER(bytes), GMT_MEMBER(allocations),
             GMT_MEMBER(sites), GMT_MEMBER(suppressed_bytes), GMT_MEMBER(suppressed_allocations),
             GMT_MEMBER(suppressed_sites), GMT_MEMBER(uncertain_bytes, kOptional),
             GMT_MEMBER(uncertain_allocations, kOptional))

// What a caching allocator (caching_allocators.h) still held when its process ended, per
// process and allocator: its cache, not a leak (docs/analysis.md, "Held by a caching
// allocator at exit").
struct HeldSite {
    uint64_t bytes = 0;
    uint64_t allocations = 0;
    format::Kind kind = format::Kind::Device;
    std::string api;
    Stack stack;
    uint64_t stack_id = 0;
};
GMT_DESCRIBE(HeldSite, GMT_MEMBER(bytes), GMT_MEMBER(allocations), GMT_MEMBER(kind),
             GMT_MEMBER(api), GMT_MEMBER(stack), GMT_MEMBER(stack_id))
// A suppression rule that took leaks out of the leaked figures (docs/analysis.md,
// "Suppressed leaks"): `report` and `check` apply the built-in rules unless told not to.
struct SuppressionReport {
    std::string rule;   // as written: "leak:libcublas.so*"
    std::string origin; // "FILE:LINE", or "built-in"
    std::string why;    // a built-in rule's reason; empty for a file's
    uint64_t sites = 0;
    uint64_t allocations = 0;
    uint64_t bytes = 0;
};
GMT_DESCRIBE(SuppressionReport, GMT_MEMBER(rule), GMT_MEMBER(origin), GMT_MEMBER(why),
             GMT_MEMBER(sites), GMT_MEMBER(allocations), GMT_MEMBER(bytes))

struct HeldReport {
    uint64_t pid = 0;
    std::string allocator; // the table entry's name
    uint64_t bytes = 0;
    uint64_t allocations = 0;
    uint64_t sites = 0;              // stacks, listed or not
    std::vector<HeldSite> top_sites; // largest first, ReportOptions::top of them
};
GMT_DESCRIBE(HeldReport, GMT_MEMBER(pid), GMT_MEMBER(allocator), GMT_MEMBER(bytes),
             GMT_MEMBER(allocations), GMT_MEMBER(sites), GMT_MEMBER(top_sites))

struct PeakSite {
    uint64_t bytes = 0;
    uint64_t allocations = 0;
    Stack stack;
    uint64_t pid = 0;
    uint64_t stack_id = 0;
};
GMT_DESCRIBE(PeakSite, GMT_MEMBER(bytes), GMT_MEMBER(allocations), GMT_MEMBER(stack),
             GMT_MEMBER(pid, kOptional), GMT_MEMBER(stack_id, kOptional))

struct PeakReport {
    uint64_t bytes = 0;
    uint64_t time_ns = 0;
    std::vector<PeakSite> top_sites;
};
GMT_DESCRIBE(PeakReport, GMT_MEMBER(bytes), GMT_MEMBER(time_ns), GMT_MEMBER(top_sites))

struct HoleReport {
    uint64_t address = 0;
    uint64_t bytes = 0;
};
GMT_DESCRIBE(HoleReport, GMT_MEMBER(address, FieldCodec::Hex), GMT_MEMBER(bytes))

struct PinReport {
    uint64_t address = 0;
    uint64_t bytes = 0;
    uint64_t pinned_bytes = 0;
    format::Kind kind = format::Kind::Device;
    std::string api;
    Stack stack;
};
GMT_DESCRIBE(PinReport, GMT_MEMBER(address, FieldCodec::Hex), GMT_MEMBER(bytes),
             GMT_MEMBER(pinned_bytes), GMT_MEMBER(kind), GMT_MEMBER(api), GMT_MEMBER(stack))

// A stack the detail fields below refer to by its index in Report::stacks.
using StackRef = std::optional<uint32_t>; // unset: not embedded (past ReportDetail::stacks)

// The address layout of one fragmentation measurement (fragmentation.h AddressLayout):
// spans, blocks and holes in address order, the first ReportDetail::layout_entries of each.
struct LayoutSpanReport {
    uint64_t address = 0;
    uint64_t bytes = 0;
    bool reservation = false; // a VMM reservation, else granules touched by allocations
};
GMT_DESCRIBE(LayoutSpanReport, GMT_MEMBER(address, FieldCodec::Hex), GMT_MEMBER(bytes),
             GMT_MEMBER(reservation))
struct LayoutBlockReport {
    uint64_t address = 0;
    uint64_t extent = 0;
    uint64_t bytes = 0;
    uint64_t pinned_bytes = 0;
    format::Kind kind = format::Kind::Device;
    std::string api;
    StackRef stack;
};
GMT_DESCRIBE(LayoutBlockReport, GMT_MEMBER(address, FieldCodec::Hex), GMT_MEMBER(extent),
             GMT_MEMBER(bytes), GMT_MEMBER(pinned_bytes), GMT_MEMBER(kind), GMT_MEMBER(api),
             GMT_MEMBER(stack, FieldCodec::StackIndex))
struct LayoutReport {
    std::vector<LayoutSpanReport> spans;
    std::vector<LayoutBlockReport> blocks;
    std::vector<HoleReport> holes; // hole_count of the measurement counts them all
    uint64_t span_count = 0;
    uint64_t block_count = 0;
};
GMT_DESCRIBE(LayoutReport, GMT_MEMBER(spans), GMT_MEMBER(blocks), GMT_MEMBER(holes),
             GMT_MEMBER(span_count), GMT_MEMBER(block_count))

struct FragmentationReport {
    Moment moment = Moment::End;
    uint64_t time_ns = 0;
    int64_t device = 0;
    uint64_t granularity = 1;
    uint64_t hole_bytes = 0;
    uint64_t largest_hole_bytes = 0;
    double ratio = 0;
    std::vector<HoleReport> holes;
    uint64_t hole_count = 0;
    std::vector<PinReport> pinning;
    uint64_t pid = 0;
    bool exact = true;
    // What the holes are measured against (0 when unknown, e.g. an older report).
    uint64_t live_bytes = 0;            // the process's live device memory there and then
    uint64_t device_total_bytes = 0;    // the device's memory
    std::optional<LayoutReport> layout; // with ReportDetail::layout_entries
};
GMT_DESCRIBE(FragmentationReport, GMT_MEMBER(moment), GMT_MEMBER(time_ns), GMT_MEMBER(device),
             GMT_MEMBER(granularity), GMT_MEMBER(hole_bytes), GMT_MEMBER(largest_hole_bytes),
             GMT_MEMBER(ratio), GMT_MEMBER(holes), GMT_MEMBER(hole_count, kOptional),
             GMT_MEMBER(pinning, kOptional), GMT_MEMBER(pid, kOptional),
             GMT_MEMBER(exact, kOptional), GMT_MEMBER(live_bytes, kOptional),
             GMT_MEMBER(device_total_bytes, kOptional), GMT_MEMBER(layout, kOptional))

struct FailureReport {
    uint64_t time_ns = 0;
    std::string api;
    uint64_t requested_bytes = 0;
    std::string error;
    uint64_t live_bytes = 0;
    std::optional<uint64_t> device_free_bytes;  // unknown when the recorder did not ask
    std::optional<uint64_t> largest_hole_bytes; // unknown past the measured failures
    std::string diagnosis;
    Stack stack;
    int64_t result = 0;
    int64_t device = 0;
    uint64_t device_total_bytes = 0;
    std::string kind;
    uint64_t pid = 0;
};
GMT_DESCRIBE(FailureReport, GMT_MEMBER(time_ns), GMT_MEMBER(api), GMT_MEMBER(requested_bytes),
             GMT_MEMBER(error), GMT_MEMBER(live_bytes), GMT_MEMBER(device_free_bytes),
             GMT_MEMBER(largest_hole_bytes), GMT_MEMBER(diagnosis), GMT_MEMBER(stack),
             GMT_MEMBER(result, kOptional), GMT_MEMBER(device, kOptional),
             GMT_MEMBER(device_total_bytes, kOptional), GMT_MEMBER(kind, kOptional),
             GMT_MEMBER(pid, kOptional))

struct ErrorReport {
    ErrorType type = ErrorType::InvalidFree;
    std::string api;
    uint64_t address = 0;
    uint64_t time_ns = 0;
    Stack stack;
    Stack allocation_stack; // empty when unknown
    std::string allocation_api;
    std::string detail;
    int64_t result = 0;
    uint64_t pid = 0;
    bool uncertain = false; // missing events could explain it
};
GMT_DESCRIBE(ErrorReport, GMT_MEMBER(type), GMT_MEMBER(api), GMT_MEMBER(address, FieldCodec::Hex),
             GMT_MEMBER(time_ns), GMT_MEMBER(stack), GMT_MEMBER(allocation_stack),
             GMT_MEMBER(allocation_api, kOptional), GMT_MEMBER(detail, kOptional),
             GMT_MEMBER(result, kOptional), GMT_MEMBER(pid, kOptional),
             GMT_MEMBER(uncertain, kOptional))

struct TimelineReport {
    int64_t device = 0;
    std::vector<std::pair<uint64_t, uint64_t>> points; // (time_ns, live bytes)
};
GMT_DESCRIBE(TimelineReport, GMT_MEMBER(device), GMT_MEMBER(points))

// One phase name of one process, over every time it was marked: a phase runs from its
// marker to the next marker of that process, or to the process's end.
struct PhaseReport {
    uint64_t pid = 0;
    std::string name;
    uint64_t occurrences = 0;
    uint64_t first_time_ns = 0;
    uint64_t duration_ns = 0;        // summed over occurrences
    uint64_t allocations = 0;        // made while the phase was current
    uint64_t allocated_bytes = 0;    // their bytes
    uint64_t frees = 0;              // done while the phase was current
    uint64_t peak_bytes = 0;         // the process's live device memory, at most, then
    uint64_t peak_time_ns = 0;       // when
    uint64_t leaked_bytes = 0;       // allocated in the phase and never freed
    uint64_t leaked_allocations = 0; // their number
    // Phases nest (pushes, NVTX ranges): the names from the outermost phase down to this
    // one, which ends the path. A report saved before nesting existed has [name].
    std::vector<std::string> path;
    // The most the live device memory rose above its level when an occurrence began (0 in
    // reports saved before it existed).
    uint64_t peak_above_start_bytes = 0;
    uint64_t peak_above_start_time_ns = 0; // when it first rose that far (0: not saved)
};
GMT_DESCRIBE(PhaseReport, GMT_MEMBER(pid), GMT_MEMBER(name), GMT_MEMBER(occurrences),
             GMT_MEMBER(first_time_ns), GMT_MEMBER(duration_ns), GMT_MEMBER(allocations),
             GMT_MEMBER(allocated_bytes), GMT_MEMBER(frees), GMT_MEMBER(peak_bytes),
             GMT_MEMBER(peak_time_ns), GMT_MEMBER(leaked_bytes), GMT_MEMBER(leaked_allocations),
             GMT_MEMBER(path, kOptional), GMT_MEMBER(peak_above_start_bytes, kOptional),
             GMT_MEMBER(peak_above_start_time_ns, kOptional))

// Where the iterations of one process begin (analyzer/analysis/iteration_clock.h) and how much
// grows across them. docs/analysis.md, "Growth", defines the figures.
struct IterationReport {
    uint64_t pid = 0;
    std::string source; // "phase", "pattern", or "none"
    std::string phase;  // source phase: the phase name whose marks or pushes begin them
    Stack stack;        // source pattern: the stack whose allocations begin them
    uint64_t stack_id = 0;
    uint64_t boundaries = 0; // iterations measured: boundaries - 1
    std::string note;        // source none: why there are no iterations
    uint64_t growing_sites = 0;
    uint64_t growth_bytes_per_iteration = 0; // summed over its growing sites
};
GMT_DESCRIBE(IterationReport, GMT_MEMBER(pid), GMT_MEMBER(source), GMT_MEMBER(phase),
             GMT_MEMBER(stack), GMT_MEMBER(stack_id), GMT_MEMBER(boundaries), GMT_MEMBER(note),
             GMT_MEMBER(growing_sites), GMT_MEMBER(growth_bytes_per_iteration))

// An allocation site whose live bytes grow across iterations.
struct GrowthSite {
    uint64_t pid = 0;
    uint64_t bytes_per_iteration = 0;
    uint64_t first_iteration = 0;    // the first iteration (1-based) of the growth
    uint64_t iterations = 0;         // from the first one through the last measured
    uint64_t growing_iterations = 0; // of those, the ones in which it grew
    double confidence = 0;           // (growing + 1) / (iterations + 2)
    uint64_t live_bytes = 0;         // at the last iteration boundary
    Stack stack;
    uint64_t stack_id = 0;
    // The phase current when its first growing allocation was made (path, outermost
    // first); empty when none was.
    std::vector<std::string> phase;
};
GMT_DESCRIBE(GrowthSite, GMT_MEMBER(pid), GMT_MEMBER(bytes_per_iteration),
             GMT_MEMBER(first_iteration), GMT_MEMBER(iterations), GMT_MEMBER(growing_iterations),
             GMT_MEMBER(confidence), GMT_MEMBER(live_bytes), GMT_MEMBER(stack),
             GMT_MEMBER(stack_id), GMT_MEMBER(phase))

// What the `growth` list covers: with a phase, the sites whose growth began in it (or in
// a phase nested in it).
struct GrowthScope {
    std::optional<std::string> phase;
    uint64_t sites = 0;               // listed or not
    uint64_t bytes_per_iteration = 0; // summed
};
GMT_DESCRIBE(GrowthScope, GMT_MEMBER(phase), GMT_MEMBER(sites), GMT_MEMBER(bytes_per_iteration))

// One rank of a job (a process whose launcher set a rank) in the per-rank table. A rank
// is an outlier in a figure when the figure is above the ranks' median by more than a
// tenth of the median and by more than three median absolute deviations (the median of an
// even number of ranks is the lower middle one): with most ranks alike, the one that
// leaks, grows or peaks higher than the rest stands out (analyzer/report/rank_table.h).
struct RankRow {
    int64_t rank = 0;
    std::string host;
    uint64_t pid = 0;
    std::string command;
    uint64_t peak_bytes = 0;
    std::vector<std::pair<int64_t, uint64_t>> device_peaks; // (ordinal, bytes)
    uint64_t leaked_bytes = 0;
    uint64_t growth_bytes_per_iteration = 0;
    uint64_t failed_allocations = 0;
    uint64_t errors = 0;
    // The figures it stands out in: "peak", "leaked", "growth", "failed_allocations",
    // "errors".
    std::vector<std::string> outlier;
};
GMT_DESCRIBE(RankRow, GMT_MEMBER(rank), GMT_MEMBER(host), GMT_MEMBER(pid), GMT_MEMBER(command),
             GMT_MEMBER(peak_bytes), GMT_MEMBER(device_peaks, FieldCodec::DevicePeak),
             GMT_MEMBER(leaked_bytes), GMT_MEMBER(growth_bytes_per_iteration),
             GMT_MEMBER(failed_allocations), GMT_MEMBER(errors), GMT_MEMBER(outlier))

// ---- The tensor level: a framework's caching allocator (docs/frameworks.md) ----

// The free space inside a caching allocator's segments on one device at one moment
// (block_tracker.h InsideSegments measures it in this type): the figures PyTorch's
// memory_stats() and its OOM message give ("reserved but unallocated").
struct SegmentSpaceReport {
    uint64_t address = 0;
    uint64_t bytes = 0;
    uint64_t allocated_bytes = 0;
    uint64_t free_bytes = 0;
    uint64_t largest_free_bytes = 0;
    uint64_t stream = 0;
    bool expandable = false;
};
GMT_DESCRIBE(SegmentSpaceReport, GMT_MEMBER(address, FieldCodec::Hex), GMT_MEMBER(bytes),
             GMT_MEMBER(allocated_bytes), GMT_MEMBER(free_bytes), GMT_MEMBER(largest_free_bytes),
             GMT_MEMBER(stream, FieldCodec::Hex), GMT_MEMBER(expandable))
struct StreamSpaceReport {
    uint64_t stream = 0;
    uint64_t reserved_bytes = 0;
    uint64_t allocated_bytes = 0;
    uint64_t free_bytes = 0;
    uint64_t largest_free_bytes = 0;
};
GMT_DESCRIBE(StreamSpaceReport, GMT_MEMBER(stream, FieldCodec::Hex), GMT_MEMBER(reserved_bytes),
             GMT_MEMBER(allocated_bytes), GMT_MEMBER(free_bytes), GMT_MEMBER(largest_free_bytes))
struct InsideSegmentsReport {
    uint64_t pid = 0;
    Moment moment = Moment::Peak; // the tensor-level peak, or an OOM (Moment::Failure)
    uint64_t time_ns = 0;
    int64_t device = 0;
    bool exact = true; // false: measured at an earlier tensor-level peak
    uint64_t reserved_bytes = 0;
    uint64_t allocated_bytes = 0;
    uint64_t active_bytes = 0;
    uint64_t requested_bytes = 0;
    uint64_t reserved_unallocated_bytes = 0; // reserved - allocated
    uint64_t free_bytes = 0;                 // free blocks (reserved - active)
    uint64_t inactive_split_blocks = 0;
    uint64_t inactive_split_bytes = 0;
    uint64_t releasable_bytes = 0; // wholly free segments: what empty_cache() would give back
    uint64_t largest_free_bytes = 0;
    std::vector<StreamSpaceReport> streams;
    std::vector<SegmentSpaceReport> segments; // most free first (--top)
    uint64_t segment_count = 0;
};
GMT_DESCRIBE(InsideSegmentsReport, GMT_MEMBER(pid), GMT_MEMBER(moment, FieldCodec::CachingMoment),
             GMT_MEMBER(time_ns), GMT_MEMBER(device), GMT_MEMBER(exact), GMT_MEMBER(reserved_bytes),
             GMT_MEMBER(allocated_bytes), GMT_MEMBER(active_bytes), GMT_MEMBER(requested_bytes),
             GMT_MEMBER(reserved_unallocated_bytes), GMT_MEMBER(free_bytes),
             GMT_MEMBER(inactive_split_blocks), GMT_MEMBER(inactive_split_bytes),
             GMT_MEMBER(releasable_bytes), GMT_MEMBER(largest_free_bytes), GMT_MEMBER(streams),
             GMT_MEMBER(segments), GMT_MEMBER(segment_count))

// Would a setting or a change have avoided an OOM (docs/frameworks.md, "Out of memory")?
struct OomHint {
    std::string
        remedy; // "expandable_segments", "max_split_size_mb", "empty_cache", "smaller batch"
    std::string verdict;   // "would have avoided it", "would not have helped", "might have helped"
    bool estimate = false; // the recorded state does not settle it
    std::string why;
};
GMT_DESCRIBE(OomHint, GMT_MEMBER(remedy), GMT_MEMBER(verdict), GMT_MEMBER(estimate),
             GMT_MEMBER(why))

struct CachingOomReport {
    uint64_t pid = 0;
    uint64_t time_ns = 0;
    int64_t device = 0;
    uint64_t stream = 0;
    uint64_t requested_bytes = 0;   // rounded, as the allocator tried it
    uint64_t device_free_bytes = 0; // the driver's free memory then
    uint64_t released_bytes = 0;    // cached segments given back right before it gave up
    bool fragmentation = false;     // enough free in total, no free block large enough
    std::string diagnosis;
    std::vector<OomHint> hints;
    Stack stack;
    InsideSegmentsReport space;
};
GMT_DESCRIBE(CachingOomReport, GMT_MEMBER(pid), GMT_MEMBER(time_ns), GMT_MEMBER(device),
             GMT_MEMBER(stream, FieldCodec::Hex), GMT_MEMBER(requested_bytes),
             GMT_MEMBER(device_free_bytes), GMT_MEMBER(released_bytes), GMT_MEMBER(fragmentation),
             GMT_MEMBER(diagnosis), GMT_MEMBER(hints), GMT_MEMBER(stack), GMT_MEMBER(space))

// One device's figures at both levels.
struct CachingDeviceReport {
    int64_t device = 0;
    uint64_t allocated_peak_bytes = 0; // tensor level: torch.cuda.max_memory_allocated()
    uint64_t allocated_peak_time_ns = 0;
    uint64_t reserved_peak_bytes = 0; // segment level: torch.cuda.max_memory_reserved()
    uint64_t reserved_peak_time_ns = 0;
    uint64_t allocations = 0;
    uint64_t frees = 0;
    uint64_t allocated_end_bytes = 0; // still allocated when the process ended
    uint64_t reserved_end_bytes = 0;
};
GMT_DESCRIBE(CachingDeviceReport, GMT_MEMBER(device), GMT_MEMBER(allocated_peak_bytes),
             GMT_MEMBER(allocated_peak_time_ns), GMT_MEMBER(reserved_peak_bytes),
             GMT_MEMBER(reserved_peak_time_ns), GMT_MEMBER(allocations), GMT_MEMBER(frees),
             GMT_MEMBER(allocated_end_bytes), GMT_MEMBER(reserved_end_bytes))

// What a process's caching allocator was and did.
// Blocks by the stack that allocated them, as the interpreter's exit left them.
struct ExitBlocks {
    uint64_t bytes = 0;
    uint64_t blocks = 0;
    uint64_t sites = 0;
    std::vector<HeldSite> top_sites; // most bytes first
};
GMT_DESCRIBE(ExitBlocks, GMT_MEMBER(bytes), GMT_MEMBER(blocks), GMT_MEMBER(sites),
             GMT_MEMBER(top_sites))

struct CachingAllocatorReport {
    uint64_t pid = 0;
    std::string allocator; // "PyTorch CUDA caching allocator"
    std::string version;
    std::string status; // format::cachingAllocatorStatusName; "attached" when only events say so
    std::string detail;
    std::string config;            // the allocator's settings from the environment
    bool sizes_exact = true;       // every block's size rebuilt by the rules it ran with
    uint64_t estimated_blocks = 0; // blocks whose size is an estimate
    uint64_t unmatched_events = 0; // events the trace could not place (before attach, gaps)
    std::vector<CachingDeviceReport> devices;
    // Freed only by the interpreter's finalization at exit: still referenced when the
    // program's own code ended (a list that kept tensors, module globals).
    ExitBlocks exit_freed;
    // Still allocated after the interpreter finalized (it freed blocks at exit, but not
    // these: objects its finalization does not collect, such as a model's parameters in a
    // reference cycle). Like exit_freed, what the program held to its end; without a
    // finalization (os._exit, a crash) such blocks are leaks instead.
    ExitBlocks exit_kept;
};
GMT_DESCRIBE(CachingAllocatorReport, GMT_MEMBER(pid), GMT_MEMBER(allocator), GMT_MEMBER(version),
             GMT_MEMBER(status), GMT_MEMBER(detail), GMT_MEMBER(config), GMT_MEMBER(sizes_exact),
             GMT_MEMBER(estimated_blocks), GMT_MEMBER(unmatched_events), GMT_MEMBER(devices),
             GMT_MEMBER(exit_freed, kFlattened), GMT_MEMBER(exit_kept, kFlattened))

struct CachingReport {
    std::vector<CachingAllocatorReport> processes;
    PeakReport tensor_peak; // over every device and process, with its sites
    std::vector<InsideSegmentsReport> fragmentation; // at the tensor-level peak
    std::vector<CachingOomReport> ooms;
};
GMT_DESCRIBE(CachingReport, GMT_MEMBER(processes), GMT_MEMBER(tensor_peak),
             GMT_MEMBER(fragmentation), GMT_MEMBER(ooms))

// ---- Detail: what the HTML view draws beyond the text report (ReportDetail) ----

struct StackEntry {
    uint64_t pid = 0;
    uint64_t stack_id = 0;
    Stack frames;
};
GMT_DESCRIBE(StackEntry, GMT_MEMBER(pid), GMT_MEMBER(stack_id), GMT_MEMBER(frames))

// One device's live bytes by kind (docs/analysis.md, "Timeline"): per downsampling bucket
// the levels at its lowest and at its highest total, so stacked kinds sum to the total.
// Device -1: pinned host memory of every device.
struct KindTimelineReport {
    int64_t device = 0;
    std::vector<format::Kind> kinds;          // the series, in this order
    std::vector<uint64_t> time_ns;            // sample times
    std::vector<std::vector<uint64_t>> bytes; // bytes[series][sample]
};
GMT_DESCRIBE(KindTimelineReport, GMT_MEMBER(device), GMT_MEMBER(kinds), GMT_MEMBER(time_ns),
             GMT_MEMBER(bytes))

// One allocation site's series in a by-site timeline.
struct SiteSeriesReport {
    uint64_t pid = 0;
    StackRef stack;
    uint64_t max_bytes = 0;      // its most live bytes at any sample
    std::vector<uint64_t> bytes; // its live bytes on the device at each sample
};
GMT_DESCRIBE(SiteSeriesReport, GMT_MEMBER(pid), GMT_MEMBER(stack, FieldCodec::StackIndex),
             GMT_MEMBER(max_bytes), GMT_MEMBER(bytes))

// One device's live bytes by allocation site (docs/analysis.md, "Detail"): sampled as
// KindTimelineReport is (each bucket's lowest and highest moments), the sites that held the
// most at any sample as series of their own, every other site's bytes summed as
// other_bytes; at each sample the series and other_bytes sum to the device's total.
struct SiteTimelineReport {
    int64_t device = 0;
    std::vector<uint64_t> time_ns;       // sample times
    std::vector<SiteSeriesReport> sites; // most bytes at a sample first
    std::vector<uint64_t> other_bytes;   // per sample
};
GMT_DESCRIBE(SiteTimelineReport, GMT_MEMBER(device), GMT_MEMBER(time_ns), GMT_MEMBER(sites),
             GMT_MEMBER(other_bytes))

struct SiteRef {
    uint64_t pid = 0;
    uint64_t bytes = 0;
    uint64_t allocations = 0;
    StackRef stack;
};
GMT_DESCRIBE(SiteRef, GMT_MEMBER(pid), GMT_MEMBER(bytes), GMT_MEMBER(allocations),
             GMT_MEMBER(stack, FieldCodec::StackIndex))

// What was live at one sampled moment (moment_sampler.h), grouped by stack.
struct MomentReport {
    uint64_t time_ns = 0;  // the live set the change at time_ns left...
    uint64_t until_ns = 0; // ...lasting until the next change
    uint64_t live_bytes = 0;
    uint64_t sites = 0;             // stacks holding memory (all, listed or not)
    std::vector<SiteRef> top_sites; // largest first
};
GMT_DESCRIBE(MomentReport, GMT_MEMBER(time_ns), GMT_MEMBER(until_ns), GMT_MEMBER(live_bytes),
             GMT_MEMBER(sites), GMT_MEMBER(top_sites))

// Every successful allocation of the run, by stack (any kind).
struct AllocatedReport {
    uint64_t bytes = 0;
    uint64_t allocations = 0;
    uint64_t sites = 0;             // all stacks, listed or not
    std::vector<SiteRef> top_sites; // most bytes first
};
GMT_DESCRIBE(AllocatedReport, GMT_MEMBER(bytes), GMT_MEMBER(allocations), GMT_MEMBER(sites),
             GMT_MEMBER(top_sites))

// A report of processes that may still be running (`gpumemtrace snapshot`, `top`), made
// from traces read while being written: what is "leaked" is what is live now.
struct SnapshotReport {
    uint64_t time_wall_ns = 0; // when it was taken (CLOCK_REALTIME)
    uint64_t running = 0;      // of its processes, those still running then
};
GMT_DESCRIBE(SnapshotReport, GMT_MEMBER(time_wall_ns), GMT_MEMBER(running))

struct Report {
    int64_t schema_version = kReportSchemaVersion;
    std::string generator;
    std::vector<ProcessReport> processes;
    Summary summary;
    std::vector<KindReport> kinds; // device, pool, managed, host_pinned, array, vmm
    std::vector<DeviceReport> devices;
    std::vector<LeakSite> leaks; // largest first
    LeakScope leak_scope;
    PeakReport peak;
    std::vector<FragmentationReport> fragmentation;
    std::vector<FailureReport> failures;
    std::vector<ErrorReport> errors;
    std::vector<TimelineReport> timeline;
    std::vector<PhaseReport> phases;
    std::vector<IterationReport> iterations; // one per process
    std::vector<GrowthSite> growth;          // most bytes per iteration first
    std::vector<RankRow> ranks;              // the processes that have a rank, by rank
    GrowthScope growth_scope;
    // Detail (empty unless ReportOptions::detail asks for it).
    std::vector<StackEntry> stacks; // referred to by StackRef
    uint64_t stacks_left_out = 0;   // distinct stacks referred to but not embedded
    std::vector<KindTimelineReport> kind_timeline;
    std::vector<SiteTimelineReport> site_timeline;
    std::vector<MomentReport> moments;
    std::optional<AllocatedReport> allocated;
    std::vector<HeldReport> held_at_exit; // largest first
    // The rules that suppressed leaks, most bytes first (leak_scope.suppressed_* sums them).
    std::vector<SuppressionReport> suppressions;
    // The tensor level, when a trace has a caching allocator's record or block events.
    std::optional<CachingReport> caching_allocator;
    // Set when the report is a snapshot of running processes (docs/live.md).
    std::optional<SnapshotReport> snapshot;
    // Each trace's requests replayed under other allocator settings (docs/whatif.md): the
    // same runs `gpumemtrace whatif` gives with its default settings, one per trace and
    // device. Empty unless asked for (ReportOptions::what_if: JSON and HTML reports).
    std::vector<WhatIfRun> what_if;
};
GMT_DESCRIBE(Report, GMT_MEMBER(schema_version), GMT_MEMBER(generator), GMT_MEMBER(processes),
             GMT_MEMBER(summary), GMT_MEMBER(kinds), GMT_MEMBER(devices), GMT_MEMBER(leaks),
             GMT_MEMBER(leak_scope, kOptional), GMT_MEMBER(peak), GMT_MEMBER(fragmentation),
             GMT_MEMBER(failures), GMT_MEMBER(errors), GMT_MEMBER(timeline),
             GMT_MEMBER(phases, kOptional), GMT_MEMBER(iterations, kOptional),
             GMT_MEMBER(growth, kOptional), GMT_MEMBER(ranks, kOptional),
             GMT_MEMBER(growth_scope, kOptional), GMT_MEMBER(stacks, kOptional),
             GMT_MEMBER(stacks_left_out, kOptional), GMT_MEMBER(kind_timeline, kOptional),
             GMT_MEMBER(site_timeline, kOptional), GMT_MEMBER(moments, kOptional),
             GMT_MEMBER(allocated, kOptional), GMT_MEMBER(held_at_exit, kOptional),
             GMT_MEMBER(suppressions, kOptional), GMT_MEMBER(caching_allocator, kOptional),
             GMT_MEMBER(snapshot, kOmitted), GMT_MEMBER(what_if, kOptional))

// The kinds a report lists, in order.
inline constexpr format::Kind kReportedKinds[] = {format::Kind::Device,  format::Kind::Pool,
                                                  format::Kind::Managed, format::Kind::HostPinned,
                                                  format::Kind::Array,   format::Kind::Vmm};

} // namespace gmt::analyzer
