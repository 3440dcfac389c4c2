// makeReport: a finished Analysis -> the typed Report (report.h).
#include "report/report_builder.h"

#include "analysis/caching/oom_hints.h"
#include "base/cuda_errors.h"
#include "base/saturating.h"
#include "read/python_code.h"
#include "report/rank_table.h"
#include "report/stack_symbolizer.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace gmt::analyzer {

using format::Kind;

namespace {

uint64_t pidOf(const ProcessData& p) {
    return p.header ? p.header->pid : 0;
}

// When and how long recording was paused; unset when it never was.
std::optional<PausedReport> pausedReport(const ProcessData& p, uint64_t end) {
    // The control word says paused before the recorder has seen it (no call since).
    const bool control_paused = p.prologue.control == format::kControlPaused;
    if (p.recording.empty() && !control_paused) {
        return std::nullopt;
    }
    PausedReport r;
    r.frees = p.lifetimes->counters().paused_frees;
    bool paused = false;
    uint64_t paused_since = 0;
    for (const format::RecordingInfo& c : p.recording) {
        const bool pause = c.change == format::RecordingChange::Pause;
        r.started_paused = r.started_paused || c.cause == format::RecordingCause::Start;
        if (pause && !paused) {
            paused_since = c.time_ns;
        } else if (!pause && paused) {
            r.paused_ns = saturatingAdd(r.paused_ns, c.time_ns - std::min(c.time_ns, paused_since));
        }
        paused = pause;
        r.changes.push_back({c.time_ns, std::string(format::recordingChangeName(c.change)),
                             std::string(format::recordingCauseName(c.cause))});
    }
    // (A list capped at AnalysisOptions::max_listed covers its changes only.)
    r.paused_at_end = paused || control_paused;
    if (paused) {
        r.paused_ns = saturatingAdd(r.paused_ns, end - std::min(end, paused_since));
    }
    return r;
}

// Its leaked bytes are the leak policy's (leak_policy.h).
ProcessReport processReport(const ProcessData& p) {
    const ProcessCounters& c = p.lifetimes->counters();
    ProcessReport r;
    const uint64_t start = p.header ? p.header->start_mono_ns : p.firstTime();
    const uint64_t end = p.endTime();
    r.pid = pidOf(p);
    r.command = p.header ? p.header->command : std::string();
    r.command_truncated = p.header && p.header->commandTruncated();
    r.trace_file = p.trace_file;
    r.complete = p.status.complete;
    r.events = p.status.events;
    r.dropped_events = p.status.dropped_events;
    r.duration_ns = end > start ? end - start : 0;
    r.ppid = p.header ? p.header->ppid : 0;
    r.executable = p.header ? p.header->executable : std::string();
    r.host = p.header ? p.header->host : std::string();
    r.start_mono_ns = start;
    r.end_mono_ns = end;
    r.start_wall_ns = p.header ? p.header->start_wall_ns : 0;
    r.driver_version = p.header ? p.header->driver_version : 0;
    r.allocations = c.allocations;
    r.frees = c.frees;
    r.failed_allocations = c.failed_allocations;
    r.errors = c.errors;
    r.recovered_records = p.status.ring_records;
    if (p.header && p.header->rank >= 0) {
        r.rank = p.header->rank;
    }
    if (p.trailer && p.trailer->exit_signal != 0) {
        r.exit_signal = p.trailer->exit_signal;
    }
    if (!p.status.complete) {
        r.incomplete_reason = p.status.incompleteReason();
        r.valid_log_end_offset = p.status.log_end_offset;
    }
    r.log_failed = p.status.log_failed;
    if (p.status.in_flight > 0) {
        r.in_flight_calls = p.status.in_flight;
    }
    for (const PhaseRecord& ph : p.phases) {
        std::vector<std::string> path = p.phase_tracker->path(ph.phase);
        std::string name = path.empty() ? std::string() : path.back();
        r.phases.push_back(
            {ph.info.time_ns, std::move(name), ph.info.kind, ph.info.tid, std::move(path)});
    }
    if (p.header && (p.header->python_version != 0 ||
                     p.header->python_status != format::PythonStatus::NotDetected)) {
        // The trailer has the status at the end; a trace without one (the process was
        // killed) has only the start's, where "pending" may have become "captured" since:
        // its stacks say so.
        format::PythonStatus status =
            p.trailer ? p.trailer->python_status : p.header->python_status;
        if (status == format::PythonStatus::Pending && !p.python_stacks.empty()) {
            status = format::PythonStatus::Captured;
        }
        r.python = PythonRuntime{pythonVersionText(p.header->python_version), status};
    }
    if (p.missing.any()) {
        MissingEventsReport m;
        m.dropped_events = p.missing.dropped_events;
        m.missing_positions = p.missing.missing_positions;
        m.gap_count = p.missing.range_count;
        for (const MissingRange& g : p.missing.ranges) {
            m.gaps.push_back({g.first_position, g.positions, g.after_time_ns, g.before_time_ns});
        }
        m.unknown_tail = p.missing.unknown_tail;
        m.unrecorded_frees = p.missing.unrecorded_frees;
        r.missing_events = std::move(m);
    }
    r.paused = pausedReport(p, end);
    if (p.aggregate) {
        const format::AggregateSummary& a = *p.aggregate;
        r.aggregate =
            AggregateReport{a.events,        a.kept_events,   a.folded_allocations, a.folded_bytes,
                            a.folded_errors, a.folded_phases, a.over_budget,        a.budget};
    }
    return r;
}

// Which phases of one process a phase name covers: the phases of that name and every
// phase nested in one of them. Empty when the name was never marked.
std::vector<bool> phasesWithin(const ProcessData& p, const std::string& name) {
    const auto& phases = p.phase_tracker->phases();
    std::vector<bool> within(phases.size(), false);
    bool any = false;
    for (uint32_t i = 0; i < phases.size(); ++i) {
        for (uint32_t ph = i; ph != kNoPhase && !within[i]; ph = phases[ph].parent) {
            within[i] = phases[ph].name == name;
        }
        any = any || within[i];
    }
    return any ? within : std::vector<bool>();
}

bool inScope(const std::vector<bool>& within, uint32_t phase) {
    return phase < within.size() && within[phase];
}

// A process's leak groups: its own allocations' (Lifetimes) and, at the tensor level, the
// blocks its caching allocator still had allocated (BlockTracker, kind Block) unless the
// leak policy keeps them at exit.
template <typename Visit> void forEachLeak(const ProcessData& p, Visit&& visit) {
    for (const auto& [key, g] : p.lifetimes->leaks()) {
        visit(key, g);
    }
    if (p.blocks) {
        for (const auto& [key, g] : p.blocks->leaks()) {
            if (!keptAtExit(key.kind, p.blocks->interpreterFinalized())) {
                visit(key, g);
            }
        }
    }
}

// The blocks the leak policy keeps at exit, by allocation stack.
std::map<uint32_t, SiteLive> keptBlocks(const BlockTracker& b) {
    std::map<uint32_t, SiteLive> kept;
    for (const auto& [key, g] : b.leaks()) {
        if (keptAtExit(key.kind, b.interpreterFinalized())) {
            SiteLive& s = kept[key.stack];
            s.bytes += g.bytes;
            s.allocations += g.allocations;
        }
    }
    return kept;
}

class Builder {
  public:
    Builder(const Analysis& analysis, const ReportOptions& options)
        : analysis_(analysis), options_(options), procs_(analysis.processes()) {
        stacks_.resize(procs_.size());
    }

    Report build() {
        Report r;
        r.generator = generatorName();
        totals(r);
        devices(r);
        r.leak_scope.phase = options_.phase;
        judgeTraceLeaks(r, groups_, leakPolicy(options_), [this](size_t process, uint64_t stack) {
            return stackOf(static_cast<uint32_t>(process), static_cast<uint32_t>(stack));
        });
        peak(r);
        fragmentation(r);
        failures(r);
        errors(r);
        timeline(r);
        growth(r);
        caching(r);
        r.ranks = rankRows({&r});
        // Detail, in the order its stacks are embedded when they are too many to embed:
        // the timeline's legend first.
        siteTimelines(r);
        allocated(r);
        moments(r);
        layouts(r);
        kindTimelines(r);
        return r;
    }

  private:
    // Symbolizers are made on first use: a report that lists no stack of a process
    // never reads that process's debug information.
    Stack stackOf(uint32_t process, uint32_t id) {
        if (!stacks_[process]) {
            stacks_[process] = std::make_unique<StackSymbolizer>(*procs_[process], options_.symbols,
                                                                 options_.user_code);
        }
        return stacks_[process]->stack(id);
    }

    void totals(Report& r) {
        std::array<uint64_t, kKindCount> kind_allocs{};
        std::array<uint64_t, kKindCount> kind_largest{};
        Summary& s = r.summary;
        for (uint32_t i = 0; i < procs_.size(); ++i) {
            const ProcessData& p = *procs_[i];
            const ProcessCounters& c = p.lifetimes->counters();
            s.allocations += c.allocations;
            s.frees += c.frees;
            s.failed_allocations += c.failed_allocations;
            s.errors += c.errors;
            s.uncertain_errors += c.uncertain_errors;
            for (size_t k = 0; k < kKindCount; ++k) {
                kind_allocs[k] += c.allocations_by_kind[k];
                kind_largest[k] = std::max(kind_largest[k], c.largest_by_kind[k]);
            }
            const auto& phase_stats = p.phase_tracker->phases();
            const std::vector<bool> within =
                options_.phase ? phasesWithin(p, *options_.phase) : std::vector<bool>();
            forEachLeak(p, [&](const LeakKey& key, const LeakGroup& g) {
                LeakGroupFigures f;
                f.process = i;
                f.stack_id = key.stack;
                f.kind = key.kind;
                f.api = key.api;
                f.released_by_teardown = key.released_by_teardown;
                f.in_scope = !options_.phase || inScope(within, key.phase);
                if (key.phase < phase_stats.size()) {
                    f.phase = r.phases.size() + key.phase;
                }
                f.bytes = g.bytes;
                f.allocations = g.allocations;
                f.uncertain_bytes = g.uncertain_bytes;
                f.uncertain_allocations = g.uncertain_allocations;
                f.bytes_by_device = &g.bytes_by_device;
                groups_.push_back(std::move(f));
            });
            r.processes.push_back(processReport(p));
            ProcessReport& pr = r.processes.back();
            pr.peak_bytes = analysis_.accounting().processPeak(i);
            for (const auto& d : analysis_.accounting().processDevices(i)) {
                if (d.device >= 0) {
                    pr.device_peaks.emplace_back(d.device, d.peak);
                }
            }
            std::sort(pr.device_peaks.begin(), pr.device_peaks.end());
            for (size_t ph = 0; ph < phase_stats.size(); ++ph) {
                const PhaseStats& st = phase_stats[ph];
                r.phases.push_back(PhaseReport{
                    pidOf(p), st.name, st.occurrences, st.first_time_ns, st.duration_ns,
                    st.allocations, st.allocated_bytes, st.frees, st.peak_bytes, st.peak_time_ns, 0,
                    0, p.phase_tracker->path(static_cast<uint32_t>(ph)), st.peak_above_start_bytes,
                    st.peak_above_start_time_ns});
            }
        }
        const LiveAccounting& acc = analysis_.accounting();
        s.peak_bytes = acc.peak().bytes;
        s.peak_time_ns = acc.peak().time_ns;
        for (Kind k : kReportedKinds) {
            const size_t i = static_cast<size_t>(k);
            r.kinds.push_back(
                KindReport{k, kind_allocs[i], acc.kindPeak(k).bytes, 0, 0, kind_largest[i]});
        }
    }

    // Every ordinal a trace describes or memory was seen on.
    void devices(Report& r) {
        const LiveAccounting& acc = analysis_.accounting();
        std::set<int> ordinals;
        for (const auto& p : procs_) {
            for (const auto& [ordinal, d] : p->devices) {
                ordinals.insert(ordinal);
            }
        }
        for (const auto& [ordinal, peak] : acc.devicePeaks()) {
            if (ordinal >= 0) {
                ordinals.insert(ordinal);
            }
        }
        for (int ordinal : ordinals) {
            DeviceReport d;
            d.ordinal = ordinal;
            for (const auto& p : procs_) {
                auto it = p->devices.find(ordinal);
                if (it != p->devices.end()) {
                    d.name = it->second.name;
                    d.total_bytes = it->second.total_bytes;
                    d.granularity = it->second.granularity;
                    break;
                }
            }
            auto peak = acc.devicePeaks().find(ordinal);
            if (peak != acc.devicePeaks().end()) {
                d.peak_bytes = peak->second.bytes;
                d.peak_time_ns = peak->second.time_ns;
            }
            r.devices.push_back(std::move(d));
        }
    }

    // The caching allocator whose patterns match a stack: each stack symbolized and matched
    // once. Null without a table, for stack 0, and where no entry matches.
    const CachingAllocator* allocatorOf(uint32_t process, uint32_t stack) {
        const auto& table = options_.caching_allocators;
        if (!table || table->empty() || stack == 0) {
            return nullptr;
        }
        auto [it, inserted] = held_.try_emplace((uint64_t{process} << 32) | stack, nullptr);
        if (inserted) {
            it->second = table->match(stackOf(process, stack));
        }
        return it->second;
    }

    // The peak of one level and the --top stacks holding it, largest first.
    PeakReport peakOf(const LiveAccounting& acc) {
        PeakReport out;
        auto sites = acc.peakSites();
        std::sort(sites.begin(), sites.end(), [](const auto& a, const auto& b) {
            return a.second.bytes != b.second.bytes ? a.second.bytes > b.second.bytes
                                                    : a.first < b.first;
        });
        out.bytes = acc.peak().bytes;
        out.time_ns = acc.peak().time_ns;
        for (size_t i = 0; i < sites.size() && i < options_.top; ++i) {
            auto process = static_cast<uint32_t>(sites[i].first >> 32);
            auto stack = static_cast<uint32_t>(sites[i].first);
            out.top_sites.push_back(PeakSite{sites[i].second.bytes, sites[i].second.allocations,
                                             stackOf(process, stack), pidOf(*procs_[process]),
                                             stack});
        }
        return out;
    }

    void peak(Report& r) { r.peak = peakOf(analysis_.accounting()); }

    void fragmentation(Report& r) {
        for (const FragmentationEntry& fe : analysis_.fragmentation()) {
            const Fragmentation& f = fe.data;
            FragmentationReport out;
            out.moment = fe.moment;
            out.time_ns = fe.time_ns;
            out.device = f.device;
            out.granularity = f.granularity;
            out.hole_bytes = f.hole_bytes;
            out.largest_hole_bytes = f.largest_hole_bytes;
            out.ratio = f.ratio;
            out.holes = f.holes;
            out.hole_count = f.hole_count;
            for (const Pin& pin : f.pins) {
                out.pinning.push_back(PinReport{pin.address, pin.bytes, pin.pinned_bytes, pin.kind,
                                                std::string(format::apiName(pin.api)),
                                                stackOf(f.process, pin.stack)});
            }
            out.pid = pidOf(*procs_[f.process]);
            out.exact = fe.exact;
            out.live_bytes = fe.live_bytes;
            out.device_total_bytes = fe.device_total;
            r.fragmentation.push_back(std::move(out));
        }
    }

    void failures(Report& r) {
        for (const Failure& f : analysis_.failures()) {
            const format::Event& e = f.event;
            FailureReport out;
            out.time_ns = e.time_ns;
            out.api = std::string(format::apiName(e.api));
            out.requested_bytes = e.size;
            out.error = f.error;
            out.live_bytes = f.live_bytes;
            if (e.device_total) {
                out.device_free_bytes = e.device_free;
            }
            out.largest_hole_bytes = f.largest_hole;
            out.diagnosis = f.diagnosis;
            out.stack = stackOf(f.process, e.stack_id);
            out.result = e.result;
            out.device = e.device;
            out.device_total_bytes = f.device_total;
            out.kind = std::string(format::kindName(e.kind));
            out.pid = pidOf(*procs_[f.process]);
            r.failures.push_back(std::move(out));
        }
    }

    void errors(Report& r) {
        for (uint32_t i = 0; i < procs_.size(); ++i) {
            for (const FreeError& e : procs_[i]->lifetimes->errors()) {
                ErrorReport out;
                out.type = e.type;
                out.api = std::string(format::apiName(e.api));
                out.address = e.address;
                out.time_ns = e.time_ns;
                out.stack = stackOf(i, e.stack);
                out.allocation_stack = stackOf(i, e.allocation_stack);
                out.allocation_api = std::string(format::apiName(e.allocation_api));
                out.detail = e.detail;
                out.result = e.result;
                out.pid = pidOf(*procs_[i]);
                out.uncertain = e.uncertain;
                r.errors.push_back(std::move(out));
            }
        }
    }

    void timeline(Report& r) {
        for (const auto& [device, t] : analysis_.accounting().timelines()) {
            if (device >= 0) {
                r.timeline.push_back(TimelineReport{device, t.points()});
            }
        }
    }

    // Iterations and growing sites, where analyzeGrowth (growth_analysis.h) ran.
    void growth(Report& r) {
        GrowthScope& scope = r.growth_scope;
        scope.phase = options_.phase;
        struct Row {
            uint32_t process;
            const GrowthSiteResult* site;
        };
        std::vector<Row> rows;
        // The tensor level's sites: a block's stack runs through its allocator's functions,
        // which the caching-allocator table matches, but a block is the program's tensor.
        std::unordered_set<uint64_t> block_sites;
        analysis_.blockAccounting().forEachSiteHistory(
            [&](uint64_t key, const SiteHistory&) { block_sites.insert(key); });
        for (uint32_t i = 0; i < procs_.size(); ++i) {
            const ProcessData& p = *procs_[i];
            if (!p.growth) {
                continue;
            }
            const GrowthResult& g = *p.growth;
            IterationReport it;
            it.pid = pidOf(p);
            it.source = std::string(sourceName(g.clock.source));
            it.phase = g.clock.phase;
            if (g.clock.source == IterationClock::Source::Pattern) {
                it.stack = stackOf(i, g.clock.stack);
                it.stack_id = g.clock.stack;
            }
            it.boundaries = g.boundaries;
            it.note = g.clock.why_none;
            const std::vector<bool> within =
                options_.phase ? phasesWithin(p, *options_.phase) : std::vector<bool>();
            for (const GrowthSiteResult& site : g.sites) {
                // A caching allocator's segments grow with the blocks inside them, which are
                // followed too (growth_analysis.cpp): the growth is listed once, at the
                // blocks' sites.
                if (p.blocks && !block_sites.contains((uint64_t{i} << 32) | site.stack) &&
                    allocatorOf(i, site.stack)) {
                    continue;
                }
                ++it.growing_sites;
                addSaturating(it.growth_bytes_per_iteration, site.bytes_per_iteration);
                if (!options_.phase || inScope(within, site.phase)) {
                    rows.push_back({i, &site});
                }
            }
            r.iterations.push_back(std::move(it));
        }
        std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
            return a.site->bytes_per_iteration > b.site->bytes_per_iteration;
        });
        for (const Row& row : rows) {
            ++scope.sites;
            addSaturating(scope.bytes_per_iteration, row.site->bytes_per_iteration);
            if (r.growth.size() >= options_.top) {
                continue; // counted, not symbolized
            }
            const GrowthSiteResult& s = *row.site;
            const ProcessData& p = *procs_[row.process];
            r.growth.push_back(GrowthSite{pidOf(p), s.bytes_per_iteration, s.first_iteration,
                                          s.iterations, s.growing_iterations, s.confidence,
                                          s.live_bytes, stackOf(row.process, s.stack), s.stack,
                                          p.phase_tracker->path(s.phase)});
        }
    }

    InsideSegmentsReport spaceReport(const InsideSegments& m, uint32_t process, Moment moment,
                                     uint64_t time_ns, bool exact) const {
        InsideSegmentsReport out = m; // the measurement is the report's type
        out.pid = pidOf(*procs_[process]);
        out.moment = moment;
        out.time_ns = time_ns;
        out.exact = exact;
        return out;
    }

    // Blocks by allocation stack, most bytes first, the first `top` sites symbolized.
    ExitBlocks exitBlocks(uint32_t process, const std::map<uint32_t, SiteLive>& by_stack) {
        std::vector<std::pair<uint32_t, SiteLive>> sites(by_stack.begin(), by_stack.end());
        std::sort(sites.begin(), sites.end(), [](const auto& x, const auto& y) {
            return x.second.bytes != y.second.bytes ? x.second.bytes > y.second.bytes
                                                    : x.first < y.first;
        });
        ExitBlocks out;
        out.sites = sites.size();
        for (const auto& [stack, live] : sites) {
            addSaturating(out.bytes, live.bytes);
            out.blocks += live.allocations;
            if (out.top_sites.size() < options_.top) {
                out.top_sites.push_back(HeldSite{live.bytes, live.allocations, Kind::Block,
                                                 siteApi(Kind::Block, format::Api::Unknown),
                                                 stackOf(process, stack), stack});
            }
        }
        return out;
    }

    // The tensor level: what each process's caching allocator did (docs/frameworks.md).
    void caching(Report& r) {
        CachingReport out;
        for (uint32_t i = 0; i < procs_.size(); ++i) {
            const ProcessData& p = *procs_[i];
            if (!p.blocks && !p.caching_allocator) {
                continue;
            }
            CachingAllocatorReport a;
            a.pid = pidOf(p);
            a.allocator = "PyTorch CUDA caching allocator";
            if (p.caching_allocator) {
                a.version = p.caching_allocator->version;
                a.status =
                    std::string(format::cachingAllocatorStatusName(p.caching_allocator->status));
                a.detail = p.caching_allocator->detail;
                a.config = p.caching_allocator->config;
            } else {
                a.status = "attached"; // block events without the record (a forked child)
            }
            if (p.blocks) {
                const BlockTracker& b = *p.blocks;
                a.sizes_exact = b.rules().exact && b.estimated() == 0;
                a.estimated_blocks = b.estimated();
                a.unmatched_events = b.unmatched();
                for (const auto& [device, t] : b.totals()) {
                    a.devices.push_back(CachingDeviceReport{
                        device, t.allocated_peak.bytes, t.allocated_peak.time_ns,
                        t.reserved_peak.bytes, t.reserved_peak.time_ns, t.allocations, t.frees,
                        t.allocated, t.reserved});
                }
                a.exit_freed = exitBlocks(i, b.exitFreed());
                a.exit_kept = exitBlocks(i, keptBlocks(b));
                for (const BlockOom& oom : b.ooms()) {
                    CachingOomReport o;
                    o.pid = pidOf(p);
                    o.time_ns = oom.time_ns;
                    o.device = oom.device;
                    o.stream = oom.stream;
                    o.requested_bytes = oom.requested;
                    o.device_free_bytes = oom.device_free;
                    o.released_bytes = oom.released_before;
                    o.stack = stackOf(i, oom.stack);
                    o.space = spaceReport(oom.space, i, Moment::Failure, oom.time_ns, true);
                    explainOom(oom, b.rules(), o);
                    out.ooms.push_back(std::move(o));
                }
            }
            out.processes.push_back(std::move(a));
        }
        if (out.processes.empty()) {
            return;
        }
        out.tensor_peak = peakOf(analysis_.blockAccounting());
        for (const BlockSpaceEntry& e : analysis_.blockPeakSpace()) {
            out.fragmentation.push_back(
                spaceReport(e.space, e.process, Moment::Peak, e.time_ns, e.exact));
        }
        r.caching_allocator = std::move(out);
    }

    // A detail field's stack: each (process, stack) symbolized once, the first
    // ReportDetail::stacks of them embedded, the others counted.
    StackRef stackRef(Report& r, uint32_t process, uint32_t stack) {
        const uint64_t key = (uint64_t{process} << 32) | stack;
        auto [it, inserted] = stack_refs_.try_emplace(key);
        if (!inserted) {
            return it->second;
        }
        if (r.stacks.size() < options_.detail.stacks) {
            it->second = static_cast<uint32_t>(r.stacks.size());
            r.stacks.push_back(StackEntry{pidOf(*procs_[process]), stack, stackOf(process, stack)});
        } else {
            ++r.stacks_left_out;
        }
        return it->second;
    }

    SiteRef siteRef(Report& r, uint64_t key, const SiteLive& live) {
        const auto process = static_cast<uint32_t>(key >> 32);
        return SiteRef{pidOf(*procs_[process]), live.bytes, live.allocations,
                       stackRef(r, process, static_cast<uint32_t>(key))};
    }

    void allocated(Report& r) {
        if (!options_.detail.allocated_sites) {
            return;
        }
        auto sites = analysis_.accounting().allocatedSites();
        AllocatedReport out;
        out.sites = sites.size();
        for (const auto& [key, live] : sites) {
            addSaturating(out.bytes, live.bytes);
            out.allocations += live.allocations;
        }
        const size_t listed = std::min(sites.size(), options_.detail.allocated_sites);
        auto larger = [](const auto& a, const auto& b) {
            return a.second.bytes != b.second.bytes ? a.second.bytes > b.second.bytes
                                                    : a.first < b.first;
        };
        std::partial_sort(sites.begin(), sites.begin() + static_cast<ptrdiff_t>(listed),
                          sites.end(), larger);
        for (size_t i = 0; i < listed; ++i) {
            out.top_sites.push_back(siteRef(r, sites[i].first, sites[i].second));
        }
        r.allocated = std::move(out);
    }

    void moments(Report& r) {
        for (const LiveMoment& m : analysis_.accounting().moments()) {
            MomentReport out{m.time_ns, m.until_ns, m.bytes, m.sites, {}};
            for (const auto& [key, live] : m.top) {
                out.top_sites.push_back(siteRef(r, key, live));
            }
            r.moments.push_back(std::move(out));
        }
    }

    void layouts(Report& r) {
        const auto& measured = analysis_.fragmentation();
        for (size_t i = 0; i < measured.size() && i < r.fragmentation.size(); ++i) {
            const Fragmentation& f = measured[i].data;
            if (!f.has_layout) {
                continue;
            }
            LayoutReport out;
            out.span_count = f.layout.span_count;
            out.block_count = f.layout.block_count;
            out.spans = f.layout.spans;
            for (const LayoutBlock& b : f.layout.blocks) {
                out.blocks.push_back(LayoutBlockReport{b.address, b.extent, b.bytes, b.pinned_bytes,
                                                       b.kind, std::string(format::apiName(b.api)),
                                                       stackRef(r, f.process, b.stack)});
            }
            out.holes = f.layout.holes;
            r.fragmentation[i].layout = std::move(out);
        }
    }

    void kindTimelines(Report& r) {
        constexpr Kind kResident[] = {Kind::Device, Kind::Pool, Kind::Managed, Kind::Array,
                                      Kind::Vmm};
        for (const auto& [device, timeline] : analysis_.accounting().kindTimelines()) {
            const auto samples = timeline.samples();
            KindTimelineReport out;
            out.device = device;
            if (device == LiveAccounting::kHostDevice) {
                out.kinds.push_back(Kind::HostPinned);
            } else {
                for (Kind k : kResident) {
                    const bool used =
                        std::any_of(samples.begin(), samples.end(), [&](const auto& s) {
                            return s.levels[static_cast<size_t>(k)] > 0;
                        });
                    if (used) {
                        out.kinds.push_back(k);
                    }
                }
                if (out.kinds.empty()) {
                    out.kinds.push_back(Kind::Device);
                }
            }
            out.bytes.resize(out.kinds.size());
            for (const auto& sample : samples) {
                out.time_ns.push_back(sample.time_ns);
                for (size_t k = 0; k < out.kinds.size(); ++k) {
                    out.bytes[k].push_back(sample.levels[static_cast<size_t>(out.kinds[k])]);
                }
            }
            r.kind_timeline.push_back(std::move(out));
        }
    }

    // The sites that held the most bytes at any sample, each a series; the rest summed.
    void siteTimelines(Report& r) {
        for (const auto& [device, timeline] : analysis_.accounting().siteTimelines()) {
            const auto samples = timeline.samples();
            std::map<uint64_t, uint64_t> most; // site -> its most bytes at a sample
            for (const auto& sample : samples) {
                for (const auto& [site, bytes] : sample.top) {
                    uint64_t& m = most[site];
                    m = std::max(m, bytes);
                }
            }
            std::vector<std::pair<uint64_t, uint64_t>> ranked(most.begin(), most.end());
            const size_t drawn = std::min(ranked.size(), options_.detail.site_timeline_sites);
            std::partial_sort(ranked.begin(), ranked.begin() + static_cast<ptrdiff_t>(drawn),
                              ranked.end(), [](const auto& a, const auto& b) {
                                  return a.second != b.second ? a.second > b.second
                                                              : a.first < b.first;
                              });
            ranked.resize(drawn);
            SiteTimelineReport out;
            out.device = device;
            for (const auto& [site, max_bytes] : ranked) {
                const auto process = static_cast<uint32_t>(site >> 32);
                out.sites.push_back(
                    SiteSeriesReport{pidOf(*procs_[process]),
                                     stackRef(r, process, static_cast<uint32_t>(site)),
                                     max_bytes,
                                     {}});
            }
            for (const auto& sample : samples) {
                out.time_ns.push_back(sample.time_ns);
                uint64_t listed = 0;
                for (size_t i = 0; i < ranked.size(); ++i) {
                    uint64_t bytes = 0; // not among the largest then: within other_bytes
                    for (const auto& [site, b] : sample.top) {
                        if (site == ranked[i].first) {
                            bytes = b;
                        }
                    }
                    out.sites[i].bytes.push_back(bytes);
                    listed += bytes;
                }
                out.other_bytes.push_back(sample.total - std::min(sample.total, listed));
            }
            r.site_timeline.push_back(std::move(out));
        }
    }

    const Analysis& analysis_;
    const ReportOptions& options_;
    std::map<uint64_t, StackRef> stack_refs_;
    const std::vector<std::unique_ptr<ProcessData>>& procs_;
    std::vector<std::unique_ptr<StackSymbolizer>> stacks_;
    std::vector<LeakGroupFigures> groups_; // every leak group, for the leak policy
    // (process << 32 | stack) of leak groups -> the caching allocator holding them, or null.
    std::unordered_map<uint64_t, const CachingAllocator*> held_;
};

} // namespace

LeakPolicy leakPolicy(const ReportOptions& options) {
    return LeakPolicy{options.caching_allocators, options.leak_filter, options.top};
}

Report makeReport(const Analysis& analysis, const ReportOptions& options) {
    return Builder(analysis, options).build();
}

} // namespace gmt::analyzer
