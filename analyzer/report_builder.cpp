#include "report_builder.h"

#include "record_json.h"
#include "symbolizer.h"
#include "trace_analysis.h"

#include <algorithm>
#include <set>

#ifndef GMT_VERSION
#define GMT_VERSION "0.1.0"
#endif

namespace gmt::analyzer {

using format::Kind;

namespace {

const Kind kReportedKinds[] = {Kind::Device,     Kind::Pool,  Kind::Managed,
                               Kind::HostPinned, Kind::Array, Kind::Vmm};

// Symbolizes the stacks of one process, each address once.
class StackRenderer {
  public:
    StackRenderer(const ProcessData& p, bool symbols) : process_(p) {
        symbolizer_ = makeSymbolizer(symbols);
        for (const auto& m : p.modules) {
            symbolizer_->addModule(m);
            modules_.addModule(m);
        }
    }

    Json stack(uint32_t id) {
        Json frames = Json::array();
        auto it = process_.stacks.find(id);
        if (id == 0 || it == process_.stacks.end()) {
            return frames;
        }
        for (uint64_t address : it->second) {
            for (const Json& f : frame(address)) {
                frames.push_back(f);
            }
        }
        return frames;
    }

  private:
    const Json& frame(uint64_t address) {
        auto [it, inserted] = cache_.try_emplace(address);
        if (!inserted) {
            return it->second;
        }
        Json out = Json::array();
        const format::ModuleInfo* m = modules_.find(address);
        for (const Frame& f : symbolizer_->symbolize(address)) {
            Json j{{"address", hex(f.address)},
                   {"module", f.module},
                   {"function", f.function},
                   {"file", f.file},
                   {"line", f.line},
                   {"inlined", f.inlined}};
            if (m) {
                j["offset"] = hex(address - m->base);
            }
            out.push_back(std::move(j));
        }
        it->second = std::move(out);
        return it->second;
    }

    const ProcessData& process_;
    std::unique_ptr<Symbolizer> symbolizer_;
    ModuleOffsetSymbolizer modules_;
    std::unordered_map<uint64_t, Json> cache_;
};

uint32_t pidOf(const ProcessData& p) {
    return p.header ? p.header->pid : 0;
}

} // namespace

Json reportJson(const Analysis& analysis, const ReportOptions& options) {
    const auto& procs = analysis.processes();
    std::vector<std::unique_ptr<StackRenderer>> renderers;
    for (const auto& p : procs) {
        renderers.push_back(std::make_unique<StackRenderer>(*p, options.symbols));
    }
    auto stackOf = [&](uint32_t process, uint32_t id) { return renderers[process]->stack(id); };

    // ----- leaks, aggregated over processes -----
    struct LeakRow {
        uint32_t process;
        LeakKey key;
        const LeakGroup* group;
    };
    std::vector<LeakRow> leak_rows;
    std::array<uint64_t, kKindCount> kind_allocs{}, kind_leaked{}, kind_leaked_allocs{};
    std::map<int, uint64_t> device_leaked;
    uint64_t allocations = 0, frees = 0, failed = 0, errors = 0, leaked = 0, leaked_allocs = 0,
             teardown_released = 0, uncertain_errors = 0, uncertain_leaked = 0;
    Json processes = Json::array();
    for (uint32_t i = 0; i < procs.size(); ++i) {
        const ProcessData& p = *procs[i];
        const ProcessCounters& c = p.lifetimes->counters();
        allocations += c.allocations;
        frees += c.frees;
        failed += c.failed_allocations;
        errors += c.errors;
        uncertain_errors += c.uncertain_errors;
        for (size_t k = 0; k < kKindCount; ++k) {
            kind_allocs[k] += c.allocations_by_kind[k];
        }
        uint64_t proc_leaked = 0;
        for (const auto& [key, g] : p.lifetimes->leaks()) {
            leak_rows.push_back({i, key, &g});
            leaked += g.bytes;
            proc_leaked += g.bytes;
            leaked_allocs += g.allocations;
            uncertain_leaked += g.uncertain_bytes;
            if (key.released_by_teardown) {
                teardown_released += g.bytes;
            }
            size_t k = static_cast<size_t>(key.kind) % kKindCount;
            kind_leaked[k] += g.bytes;
            kind_leaked_allocs[k] += g.allocations;
            for (const auto& [dev, bytes] : g.bytes_by_device) {
                device_leaked[dev] += bytes;
            }
        }
        uint64_t start = p.header ? p.header->start_mono_ns : p.first_time_ns;
        uint64_t end =
            p.trailer && p.trailer->end_mono_ns ? p.trailer->end_mono_ns : p.last_time_ns;
        Json proc{{"pid", pidOf(p)},
                  {"command", p.header ? p.header->command : std::string()},
                  {"trace_file", p.trace_file},
                  {"complete", p.status.complete},
                  {"events", p.status.events},
                  {"dropped_events", p.status.dropped_events},
                  {"duration_ns", end > start ? end - start : 0},
                  {"ppid", p.header ? p.header->ppid : 0},
                  {"executable", p.header ? p.header->executable : std::string()},
                  {"host", p.header ? p.header->host : std::string()},
                  {"start_mono_ns", start},
                  {"start_wall_ns", p.header ? p.header->start_wall_ns : 0},
                  {"driver_version", p.header ? p.header->driver_version : 0},
                  {"allocations", c.allocations},
                  {"frees", c.frees},
                  {"failed_allocations", c.failed_allocations},
                  {"errors", c.errors},
                  {"leaked_bytes", proc_leaked},
                  {"recovered_records", p.status.ring_records}};
        if (p.trailer && p.trailer->exit_signal != 0) {
            // Complete (the tracer drained everything) but the process died of this signal.
            proc["exit_signal"] = p.trailer->exit_signal;
        }
        if (!p.status.complete) {
            proc["incomplete_reason"] =
                p.status.stopped_early
                    ? p.status.stop_reason
                    : (p.status.trailer_seen ? "records follow the trailer"
                                             : "no trailer: the process did not exit cleanly");
            proc["valid_log_end_offset"] = p.status.log_end_offset;
        }
        Json phases = Json::array();
        for (const auto& ph : p.phases) {
            phases.push_back(Json{{"time_ns", ph.time_ns}, {"name", ph.name}});
        }
        proc["phases"] = std::move(phases);
        if (p.missing.any()) {
            Json ranges = Json::array();
            for (const MissingRange& m : p.missing.ranges) {
                ranges.push_back(Json{{"first_position", m.first_position},
                                      {"positions", m.positions},
                                      {"after_time_ns", m.after_time_ns},
                                      {"before_time_ns", m.before_time_ns}});
            }
            proc["missing_events"] = Json{{"dropped_events", p.missing.dropped_events},
                                          {"missing_positions", p.missing.missing_positions},
                                          {"gap_count", p.missing.range_count},
                                          {"gaps", std::move(ranges)},
                                          {"unknown_tail", p.missing.unknown_tail}};
        }
        processes.push_back(std::move(proc));
    }

    const LiveAccounting& acc = analysis.accounting();
    Json report;
    report["schema_version"] = kReportSchemaVersion;
    report["generator"] = std::string("gpumemtrace ") + GMT_VERSION;
    report["processes"] = std::move(processes);
    report["summary"] = Json{{"allocations", allocations},
                             {"frees", frees},
                             {"failed_allocations", failed},
                             {"errors", errors},
                             {"leaked_bytes", leaked},
                             {"leaked_allocations", leaked_allocs},
                             {"peak_bytes", acc.peak().bytes},
                             {"peak_time_ns", acc.peak().time_ns},
                             {"leak_groups", leak_rows.size()},
                             {"teardown_released_bytes", teardown_released},
                             {"uncertain_errors", uncertain_errors},
                             {"uncertain_leaked_bytes", uncertain_leaked}};

    Json kinds = Json::object();
    for (Kind k : kReportedKinds) {
        size_t i = static_cast<size_t>(k);
        kinds[std::string(format::kindName(k))] =
            Json{{"allocations", kind_allocs[i]},
                 {"peak_bytes", acc.kindPeak(k).bytes},
                 {"leaked_bytes", kind_leaked[i]},
                 {"leaked_allocations", kind_leaked_allocs[i]}};
    }
    report["kinds"] = std::move(kinds);

    // ----- devices: every ordinal a trace describes or memory was seen on -----
    std::set<int> ordinals;
    for (const auto& p : procs) {
        for (const auto& [ordinal, d] : p->devices) {
            ordinals.insert(ordinal);
        }
    }
    for (const auto& [ordinal, peak] : acc.devicePeaks()) {
        if (ordinal >= 0) {
            ordinals.insert(ordinal);
        }
    }
    Json devices = Json::array();
    for (int ordinal : ordinals) {
        std::string name;
        uint64_t total = 0, granularity = 0;
        for (const auto& p : procs) {
            auto it = p->devices.find(ordinal);
            if (it != p->devices.end()) {
                name = it->second.name;
                total = it->second.total_bytes;
                granularity = it->second.granularity;
                break;
            }
        }
        auto peak = acc.devicePeaks().find(ordinal);
        devices.push_back(
            Json{{"ordinal", ordinal},
                 {"name", name},
                 {"total_bytes", total},
                 {"peak_bytes", peak == acc.devicePeaks().end() ? 0 : peak->second.bytes},
                 {"peak_time_ns", peak == acc.devicePeaks().end() ? 0 : peak->second.time_ns},
                 {"leaked_bytes", device_leaked[ordinal]},
                 {"granularity", granularity}});
    }
    report["devices"] = std::move(devices);

    // ----- leaks: largest group first -----
    std::sort(leak_rows.begin(), leak_rows.end(), [](const LeakRow& a, const LeakRow& b) {
        if (a.group->bytes != b.group->bytes) {
            return a.group->bytes > b.group->bytes;
        }
        if (a.group->allocations != b.group->allocations) {
            return a.group->allocations > b.group->allocations;
        }
        return std::tie(a.process, a.key) < std::tie(b.process, b.key);
    });
    Json leaks = Json::array();
    for (size_t i = 0; i < leak_rows.size() && i < options.top; ++i) {
        const LeakRow& r = leak_rows[i];
        leaks.push_back(Json{{"bytes", r.group->bytes},
                             {"allocations", r.group->allocations},
                             {"kind", format::kindName(r.key.kind)},
                             {"api", format::apiName(r.key.api)},
                             {"stack", stackOf(r.process, r.key.stack)},
                             {"released_by_teardown", r.key.released_by_teardown},
                             {"pid", pidOf(*procs[r.process])},
                             {"stack_id", r.key.stack},
                             {"uncertain_bytes", r.group->uncertain_bytes},
                             {"uncertain_allocations", r.group->uncertain_allocations}});
    }
    report["leaks"] = std::move(leaks);

    // ----- peak -----
    auto sites = acc.peakSites();
    std::sort(sites.begin(), sites.end(), [](const auto& a, const auto& b) {
        return a.second.bytes != b.second.bytes ? a.second.bytes > b.second.bytes
                                                : a.first < b.first;
    });
    Json top_sites = Json::array();
    for (size_t i = 0; i < sites.size() && i < options.top; ++i) {
        auto process = static_cast<uint32_t>(sites[i].first >> 32);
        auto stack = static_cast<uint32_t>(sites[i].first);
        top_sites.push_back(Json{{"bytes", sites[i].second.bytes},
                                 {"allocations", sites[i].second.allocations},
                                 {"stack", stackOf(process, stack)},
                                 {"pid", pidOf(*procs[process])},
                                 {"stack_id", stack}});
    }
    report["peak"] = Json{{"bytes", acc.peak().bytes},
                          {"time_ns", acc.peak().time_ns},
                          {"top_sites", std::move(top_sites)}};

    // ----- fragmentation -----
    Json fragmentation = Json::array();
    for (const FragmentationEntry& fe : analysis.fragmentation()) {
        const Fragmentation& f = fe.data;
        Json holes = Json::array();
        for (const Hole& h : f.holes) {
            holes.push_back(Json{{"address", hex(h.address)}, {"bytes", h.bytes}});
        }
        Json pins = Json::array();
        for (const Pin& pin : f.pins) {
            pins.push_back(Json{{"address", hex(pin.address)},
                                {"bytes", pin.bytes},
                                {"pinned_bytes", pin.pinned_bytes},
                                {"kind", format::kindName(pin.kind)},
                                {"api", format::apiName(pin.api)},
                                {"stack", stackOf(f.process, pin.stack)}});
        }
        fragmentation.push_back(Json{{"moment", fe.moment},
                                     {"time_ns", fe.time_ns},
                                     {"device", f.device},
                                     {"granularity", f.granularity},
                                     {"hole_bytes", f.hole_bytes},
                                     {"largest_hole_bytes", f.largest_hole_bytes},
                                     {"ratio", f.ratio},
                                     {"holes", std::move(holes)},
                                     {"hole_count", f.hole_count},
                                     {"pinning", std::move(pins)},
                                     {"pid", pidOf(*procs[f.process])},
                                     {"exact", fe.exact}});
    }
    report["fragmentation"] = std::move(fragmentation);

    // ----- failures -----
    Json failures = Json::array();
    for (const Failure& f : analysis.failures()) {
        const format::Event& e = f.event;
        failures.push_back(
            Json{{"time_ns", e.time_ns},
                 {"api", format::apiName(e.api)},
                 {"requested_bytes", e.size},
                 {"error", f.error},
                 {"live_bytes", f.live_bytes},
                 {"device_free_bytes", e.device_total ? Json(e.device_free) : Json(nullptr)},
                 {"largest_hole_bytes", f.largest_hole ? Json(*f.largest_hole) : Json(nullptr)},
                 {"diagnosis", f.diagnosis},
                 {"stack", stackOf(f.process, e.stack_id)},
                 {"result", e.result},
                 {"device", e.device},
                 {"device_total_bytes", f.device_total},
                 {"kind", format::kindName(e.kind)},
                 {"pid", pidOf(*procs[f.process])}});
    }
    report["failures"] = std::move(failures);

    // ----- errors -----
    Json errs = Json::array();
    for (uint32_t i = 0; i < procs.size(); ++i) {
        for (const FreeError& e : procs[i]->lifetimes->errors()) {
            errs.push_back(Json{{"type", errorTypeName(e.type)},
                                {"api", format::apiName(e.api)},
                                {"address", hex(e.address)},
                                {"time_ns", e.time_ns},
                                {"stack", stackOf(i, e.stack)},
                                {"allocation_stack", stackOf(i, e.allocation_stack)},
                                {"allocation_api", format::apiName(e.allocation_api)},
                                {"detail", e.detail},
                                {"result", e.result},
                                {"pid", pidOf(*procs[i])},
                                {"uncertain", e.uncertain}});
        }
    }
    report["errors"] = std::move(errs);

    // ----- timeline -----
    Json timeline = Json::array();
    for (const auto& [device, t] : acc.timelines()) {
        if (device < 0) {
            continue;
        }
        Json points = Json::array();
        for (const auto& [time, bytes] : t.points()) {
            points.push_back(Json::array({time, bytes}));
        }
        timeline.push_back(Json{{"device", device}, {"points", std::move(points)}});
    }
    report["timeline"] = std::move(timeline);
    return report;
}

Json buildReport(const std::vector<std::string>& traces, const ReportOptions& options) {
    AnalysisOptions ao;
    ao.timeline_points = options.timeline_points;
    ao.top = options.top;
    Analysis analysis(ao);
    analyzeTraces(traces, analysis);
    return reportJson(analysis, options);
}

} // namespace gmt::analyzer
