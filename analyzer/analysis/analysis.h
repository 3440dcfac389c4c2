// The streaming analysis of one or more traces (one per process): records go in one at a
// time, in each trace's order (across traces, events interleaved by time), and each
// process is ended at its end time in that same order; results come out at the end.
// Memory grows with live allocations and distinct stacks only: lists that could grow
// with the trace (failures, errors, phase markers) are capped, with exact counts.
#pragma once

#include "analysis/caching/block_tracker.h"
#include "analysis/folded_levels.h"
#include "analysis/fragmentation.h"
#include "analysis/growth_analysis.h"
#include "analysis/lifetimes.h"
#include "analysis/live_accounting.h"
#include "analysis/phase_tracker.h"
#include "analysis/whatif/request_stream.h"
#include "model/moment.h"
#include "read/event_stores.h"
#include "read/record.h"
#include "read/trace_reader.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include <gpumemtrace/format/aggregate.h>
#include <gpumemtrace/format/file_layout.h>

namespace gmt::analyzer {

struct AnalysisOptions {
    size_t timeline_points = 2000;
    size_t top = 10;          // holes and pins kept per fragmentation entry
    size_t max_listed = 1000; // failures / errors / phases kept per process
    // The phase a report or check is scoped to: kept past max_listed (phase_tracker.h).
    std::optional<std::string> phase;
    size_t max_failure_fragmentation = 100; // failures measured for fragmentation
    // For the HTML view (0: not kept): by-kind timelines, sampled moments, and the address
    // layout (this many entries per list) at the peak and at the first `layout_failures`
    // failures; not at the end, where each process of a long run would add one.
    AccountingDetail detail;
    size_t layout_entries = 0;
    size_t layout_failures = 0;
    // Events after this time are not read: each process ends there, so what is live at the
    // end is what was live then (`check` lists what held a phase's peak increase so).
    uint64_t until_ns = UINT64_MAX;
};

struct Failure {
    uint32_t process = 0;
    format::Event event;
    std::string error;
    uint64_t live_bytes = 0;
    uint64_t device_total = 0;
    std::optional<uint64_t> largest_hole; // unset past max_failure_fragmentation
    std::string diagnosis;
};

struct FragmentationEntry {
    Moment moment = Moment::End;
    uint64_t time_ns = 0;
    bool exact = true;         // peak only: false when the snapshot was of an earlier peak
    uint64_t live_bytes = 0;   // the process's live bytes on the device then
    uint64_t device_total = 0; // the device's memory, 0 when unknown
    Fragmentation data;
};

// A run of sequence positions no part of the trace holds (docs/analysis.md, "Missing
// events"): events the process made whose records were lost.
struct MissingRange {
    uint64_t first_position = 0;
    uint64_t positions = 0;
    uint64_t after_time_ns = 0;  // the latest event before it (0: none)
    uint64_t before_time_ns = 0; // the event right after it (0: not an event)
};

// What is known to be missing from one trace. Leak and error figures that the missing
// events could change are marked uncertain (Lifetimes), not presented as fact.
struct MissingEvents {
    uint64_t dropped_events = 0;    // drop mode: lost at points the trace does not record
    uint64_t missing_positions = 0; // over every range, listed or not
    uint64_t range_count = 0;
    std::vector<MissingRange> ranges; // the first AnalysisOptions::max_listed
    // The log ends in damage and nothing after it survived: an unknown number of events.
    bool unknown_tail = false;
    // Allocations, VMM handles and mappings that a later event ended without naming them
    // (an allocation made over a live one): their free, release or unmap is not in the
    // trace (Lifetimes' implicit ends).
    uint64_t unrecorded_frees = 0;

    bool any() const {
        return dropped_events > 0 || range_count > 0 || unknown_tail || unrecorded_frees > 0;
    }
};

// A Phase record as the report lists it, with the phase (phase_tracker.h) it began, or
// ended for a pop.
struct PhaseRecord {
    format::PhaseInfo info;
    uint32_t phase = kNoPhase;
};

// The free space inside a caching allocator's segments, measured at the tensor-level peak.
struct BlockSpaceEntry {
    uint32_t process = 0;
    uint64_t time_ns = 0;
    bool exact = true; // false: measured at an earlier peak (the walk was not paid for)
    InsideSegments space;
};

struct ProcessData {
    std::string trace_file;
    format::Prologue prologue{};
    std::optional<format::HeaderInfo> header;
    std::map<int, format::DeviceInfo> devices;
    std::vector<format::ModuleInfo> modules;
    std::unordered_map<uint32_t, std::vector<uint64_t>> stacks;
    // The Python frames of those stacks that have any, and the code objects they name.
    std::unordered_map<uint32_t, std::vector<format::PythonFrame>> python_stacks;
    std::unordered_map<uint32_t, format::PythonCodeInfo> python_code;
    std::optional<format::TrailerInfo> trailer;
    std::vector<PhaseRecord> phases; // markers, capped
    // Recording paused and resumed (RecordTag::Recording), capped like phases; and their
    // number, which is exact.
    std::vector<format::RecordingInfo> recording;
    uint64_t recording_changes = 0;
    std::unique_ptr<PhaseTracker> phase_tracker;
    ReadStatus status;
    std::optional<GrowthResult> growth; // set by analyzeGrowth (growth_analysis.h)
    MissingEvents missing;
    bool ended = false; // endProcess() was called: its memory no longer counts as live
    // The earliest event's time, UINT64_MAX before the first (firstTime() says 0 then): the
    // earliest is then kept by one comparison per event, without testing for the first.
    uint64_t first_time_ns = UINT64_MAX;
    uint64_t last_time_ns = 0;
    uint64_t events = 0;
    uint64_t firstTime() const { return events ? first_time_ns : 0; }
    // Its events that the what-if replay reads as allocation requests
    // (makesAllocationRequest): at least this many requests, known without reading again.
    uint64_t allocation_requests = 0;
    std::unique_ptr<Lifetimes> lifetimes;
    // The blocks of a framework's caching allocator (block events), and what the recorder
    // said of the allocator; null / unset when the trace has neither.
    std::unique_ptr<BlockTracker> blocks;
    std::optional<format::CachingAllocatorInfo> caching_allocator;
    // An aggregated trace's checkpoint (format/aggregate.h): what the trace folded.
    std::optional<format::AggregateSummary> aggregate;
    // What its folded allocations held at the Phase records (FoldedMark records).
    FoldedLevels folded;

    uint64_t granularity(int device) const;
    uint64_t deviceTotal(int device) const;
    // When its allocations end: the trailer's end time, else (the process died) its last
    // event.
    uint64_t endTime() const;
};

class Analysis {
  public:
    explicit Analysis(AnalysisOptions options = {});
    ~Analysis();

    uint32_t addProcess(const std::string& trace_file, const format::Prologue& prologue);
    void onRecord(uint32_t process, const Record& record) {
        // Inline: all but a few records are events, with nothing missing before them.
        if (record.tag == format::RecordTag::Event && record.missing_before == 0) [[likely]] {
            onPlainEvents(process, {&record.event, 1}, UINT64_MAX);
        } else {
            onOtherRecord(process, record);
        }
    }
    // A run of one process's events with nothing missing before any of them, applied in
    // order up to the first whose time is after `until_ns` (not applied); returns how many it
    // applied. Every event comes through it: a trace read alone a run at a time, the others
    // (onRecord) a run of one. Inline, with what holds for the whole run held in registers:
    // the process's event count, first and last times and count of allocation requests
    // (nothing that applies an event reads them; the count of all events, which the
    // fragmentation measurement's rate limit reads, is kept per event), its lifetimes, and
    // whether a phase is current (only Phase records change it, and they end a run).
    // An event outside any phase and not a block event (all of an allocation loop's) goes
    // straight to the process's lifetimes, the others out of line. Lifetimes::onEvent takes
    // the peak snapshot before anything ends (its gate()).
    size_t onPlainEvents(uint32_t process, std::span<const format::Event> events,
                         uint64_t until_ns) {
        ProcessData& p = *processes_[process];
        Lifetimes& lifetimes = *p.lifetimes;
        const bool in_phase = p.phase_tracker->current() != kNoPhase;
        uint64_t first = p.first_time_ns, last = p.last_time_ns, requests = 0;
        const format::Event* e = events.data();
        const format::Event* const end = e + events.size();
        for (; e != end && e->time_ns <= until_ns; ++e) {
            prefetchEventsAhead(e);
            ++events_;
            first = std::min(first, e->time_ns);
            last = std::max(last, e->time_ns);
            if (e->op != format::Op::Block && !in_phase) [[likely]] {
                requests += makesCallRequest(*e);
                if (lifetimes.onEvent(*e)) {
                    onFailure(process, *e);
                }
            } else {
                onBlockOrPhaseEvent(p, process, *e);
            }
        }
        const auto applied = static_cast<size_t>(e - events.data());
        p.allocation_requests += requests;
        p.events += applied;
        p.first_time_ns = first;
        p.last_time_ns = last;
        return applied;
    }
    // Tells `observer` (may be null) of every counted allocation's lifetime, in every
    // process added before or after.
    void setLifetimeObserver(LifetimeObserver* observer);
    // The process ended (its trace is read to the end): call it at the process's
    // endTime() in time order with the other processes' events, so that the memory of
    // processes that ran one after another is never counted together.
    void endProcess(uint32_t process, const ReadStatus& status);
    // After every trace was read: ends the processes not ended yet, settles the peak,
    // measures the end state, collects leaks.
    void finish();

    // Tells `observer` of every change to a (process, stack) live-byte counter from now on
    // (nullptr: stop), at both levels: allocations, and a caching allocator's blocks.
    void observeSites(SiteObserver* observer) {
        accounting_.setObserver(observer);
        block_accounting_.setObserver(observer);
    }

    const AnalysisOptions& options() const { return options_; }
    const std::vector<std::unique_ptr<ProcessData>>& processes() const { return processes_; }
    const LiveAccounting& accounting() const { return accounting_; }
    const std::vector<Failure>& failures() const { return failures_; }
    const std::vector<FragmentationEntry>& fragmentation() const { return fragmentation_; }
    // The tensor level: blocks of caching allocators (block_tracker.h), all processes.
    const LiveAccounting& blockAccounting() const { return block_accounting_; }
    const std::vector<BlockSpaceEntry>& blockPeakSpace() const { return block_peak_space_; }

  private:
    void onOtherRecord(uint32_t process, const Record& r);
    void onBlockOrPhaseEvent(ProcessData& p, uint32_t process, const format::Event& e);
    void onGap(ProcessData& p, const Record& r);
    void onFailure(uint32_t process, const format::Event& e);
    void onPeakSnapshot(const PeakPoint& peak);
    void onBlockEvent(ProcessData& p, uint32_t process, const format::Event& e);
    void onBlockPeakSnapshot(const PeakPoint& peak);
    BlockTracker& blocksOf(ProcessData& p, uint32_t process);
    std::vector<int> devicesOf(const ProcessData& p, bool live_only) const;
    // Fragmentation on every device of the process (live_only: those holding memory), in
    // one walk of its live set, appended to `out` as taken at `moment` (with each device's
    // address layout when layout_entries > 0).
    void measureDevices(uint32_t process, bool live_only, Moment moment, uint64_t time_ns,
                        std::vector<FragmentationEntry>& out, size_t layout_entries = 0) const;

    AnalysisOptions options_;
    LiveAccounting accounting_;
    std::vector<std::unique_ptr<ProcessData>> processes_;
    std::vector<Failure> failures_;
    size_t measured_failures_ = 0;
    std::vector<FragmentationEntry> peak_fragmentation_;
    std::vector<FragmentationEntry> fragmentation_; // final order: peak, failures, end
    std::vector<FragmentationEntry> failure_fragmentation_;
    uint64_t events_ = 0;
    uint64_t events_at_last_measure_ = 0;
    LifetimeObserver* lifetime_observer_ = nullptr;
    LiveAccounting block_accounting_;
    std::vector<BlockSpaceEntry> block_peak_space_;
    uint64_t events_at_last_block_measure_ = 0;
};

} // namespace gmt::analyzer
