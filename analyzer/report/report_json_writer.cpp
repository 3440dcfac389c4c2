// toJson: the typed Report -> JSON, field names and order as docs/report.schema.json.
#include "report/report_json.h"

#include "base/hex.h"
#include "base/text_safety.h"

namespace gmt::analyzer {

namespace {

std::string text(const std::string& s) {
    return validUtf8(s);
}

std::string_view languageName(FrameLanguage l) {
    return l == FrameLanguage::Python ? "python" : "native";
}

} // namespace

Json frameJson(const Frame& f) {
    const bool python = f.language == FrameLanguage::Python;
    Json j{{"address", python ? std::string() : hex(f.address)},
           {"module", text(f.module)},
           {"function", text(f.function)},
           {"file", text(f.file)},
           {"line", f.line},
           {"inlined", f.inlined}};
    if (f.offset && !python) {
        j["offset"] = hex(*f.offset);
    }
    j["language"] = languageName(f.language);
    return j;
}

namespace {

// The stacks as toJson(report) writes them; a StackJson of a caller's own takes its place
// in every helper below (the parameter they call stackJson).
Json frameObjects(const Stack& stack) {
    Json out = Json::array();
    for (const Frame& f : stack) {
        out.push_back(frameJson(f));
    }
    return out;
}

Json devicePeaksJson(const std::vector<std::pair<int64_t, uint64_t>>& peaks) {
    Json out = Json::array();
    for (const auto& [device, bytes] : peaks) {
        out.push_back(Json{{"device", device}, {"peak_bytes", bytes}});
    }
    return out;
}

Json textList(const std::vector<std::string>& items) {
    Json out = Json::array();
    for (const std::string& item : items) {
        out.push_back(text(item));
    }
    return out;
}

Json processJson(const ProcessReport& p) {
    Json j{{"pid", p.pid},
           {"command", text(p.command)},
           {"trace_file", text(p.trace_file)},
           {"complete", p.complete},
           {"events", p.events},
           {"dropped_events", p.dropped_events},
           {"duration_ns", p.duration_ns},
           {"ppid", p.ppid},
           {"executable", text(p.executable)},
           {"host", text(p.host)},
           {"start_mono_ns", p.start_mono_ns},
           {"start_wall_ns", p.start_wall_ns},
           {"driver_version", p.driver_version},
           {"allocations", p.allocations},
           {"frees", p.frees},
           {"failed_allocations", p.failed_allocations},
           {"errors", p.errors},
           {"leaked_bytes", p.leaked_bytes},
           {"recovered_records", p.recovered_records},
           {"rank", p.rank ? Json(*p.rank) : Json(nullptr)}};
    if (p.exit_signal) {
        j["exit_signal"] = *p.exit_signal;
    }
    if (p.incomplete_reason) {
        j["incomplete_reason"] = text(*p.incomplete_reason);
    }
    if (p.valid_log_end_offset) {
        j["valid_log_end_offset"] = *p.valid_log_end_offset;
    }
    if (p.log_failed) {
        j["log_failed"] = true;
    }
    if (p.in_flight_calls) {
        j["in_flight_calls"] = *p.in_flight_calls;
    }
    Json phases = Json::array();
    for (const PhaseMarker& m : p.phases) {
        phases.push_back(Json{{"time_ns", m.time_ns},
                              {"name", text(m.name)},
                              {"kind", format::phaseKindName(m.kind)},
                              {"tid", m.tid},
                              {"path", textList(m.path)}});
    }
    j["phases"] = std::move(phases);
    j["end_mono_ns"] = p.end_mono_ns;
    j["peak_bytes"] = p.peak_bytes;
    j["device_peaks"] = devicePeaksJson(p.device_peaks);
    if (p.python) {
        j["python"] = Json{{"version", text(p.python->version)},
                           {"status", format::pythonStatusName(p.python->status)}};
    }
    if (p.missing_events) {
        const MissingEventsReport& m = *p.missing_events;
        Json gaps = Json::array();
        for (const MissingRangeReport& g : m.gaps) {
            gaps.push_back(Json{{"first_position", g.first_position},
                                {"positions", g.positions},
                                {"after_time_ns", g.after_time_ns},
                                {"before_time_ns", g.before_time_ns}});
        }
        j["missing_events"] = Json{{"dropped_events", m.dropped_events},
                                   {"missing_positions", m.missing_positions},
                                   {"gap_count", m.gap_count},
                                   {"gaps", std::move(gaps)},
                                   {"unknown_tail", m.unknown_tail}};
    }
    return j;
}

Json optional(const std::optional<uint64_t>& v) {
    return v ? Json(*v) : Json(nullptr);
}

Json stackRefJson(const StackRef& ref) {
    return ref ? Json(*ref) : Json(nullptr);
}

Json layoutJson(const LayoutReport& l) {
    Json spans = Json::array();
    for (const LayoutSpanReport& s : l.spans) {
        spans.push_back(
            Json{{"address", hex(s.address)}, {"bytes", s.bytes}, {"reservation", s.reservation}});
    }
    Json blocks = Json::array();
    for (const LayoutBlockReport& b : l.blocks) {
        blocks.push_back(Json{{"address", hex(b.address)},
                              {"extent", b.extent},
                              {"bytes", b.bytes},
                              {"pinned_bytes", b.pinned_bytes},
                              {"kind", format::kindName(b.kind)},
                              {"api", text(b.api)},
                              {"stack", stackRefJson(b.stack)}});
    }
    Json holes = Json::array();
    for (const HoleReport& h : l.holes) {
        holes.push_back(Json{{"address", hex(h.address)}, {"bytes", h.bytes}});
    }
    return Json{{"spans", std::move(spans)},
                {"blocks", std::move(blocks)},
                {"holes", std::move(holes)},
                {"span_count", l.span_count},
                {"block_count", l.block_count}};
}

Json siteRefsJson(const std::vector<SiteRef>& sites) {
    Json out = Json::array();
    for (const SiteRef& s : sites) {
        out.push_back(Json{{"pid", s.pid},
                           {"bytes", s.bytes},
                           {"allocations", s.allocations},
                           {"stack", stackRefJson(s.stack)}});
    }
    return out;
}

// The detail fields (report.h ReportDetail): empty unless they were asked for.
void detailJson(const Report& r, Json& report, const StackJson& stackJson) {
    Json stacks = Json::array();
    for (const StackEntry& s : r.stacks) {
        stacks.push_back(
            Json{{"pid", s.pid}, {"stack_id", s.stack_id}, {"frames", stackJson(s.frames)}});
    }
    report["stacks"] = std::move(stacks);
    report["stacks_left_out"] = r.stacks_left_out;
    Json kind_timeline = Json::array();
    for (const KindTimelineReport& t : r.kind_timeline) {
        Json kinds = Json::array();
        for (format::Kind k : t.kinds) {
            kinds.push_back(format::kindName(k));
        }
        kind_timeline.push_back(Json{{"device", t.device},
                                     {"kinds", std::move(kinds)},
                                     {"time_ns", t.time_ns},
                                     {"bytes", t.bytes}});
    }
    report["kind_timeline"] = std::move(kind_timeline);
    Json moments = Json::array();
    for (const MomentReport& m : r.moments) {
        moments.push_back(Json{{"time_ns", m.time_ns},
                               {"until_ns", m.until_ns},
                               {"live_bytes", m.live_bytes},
                               {"sites", m.sites},
                               {"top_sites", siteRefsJson(m.top_sites)}});
    }
    report["moments"] = std::move(moments);
    if (r.allocated) {
        const AllocatedReport& a = *r.allocated;
        report["allocated"] = Json{{"bytes", a.bytes},
                                   {"allocations", a.allocations},
                                   {"sites", a.sites},
                                   {"top_sites", siteRefsJson(a.top_sites)}};
    } else {
        report["allocated"] = nullptr;
    }
}

Json heldSitesJson(const std::vector<HeldSite>& sites, const StackJson& stackJson) {
    Json out = Json::array();
    for (const HeldSite& site : sites) {
        out.push_back(Json{{"bytes", site.bytes},
                           {"allocations", site.allocations},
                           {"kind", format::kindName(site.kind)},
                           {"api", text(site.api)},
                           {"stack", stackJson(site.stack)},
                           {"stack_id", site.stack_id}});
    }
    return out;
}

Json peakSitesJson(const std::vector<PeakSite>& sites, const StackJson& stackJson) {
    Json out = Json::array();
    for (const PeakSite& site : sites) {
        out.push_back(Json{{"bytes", site.bytes},
                           {"allocations", site.allocations},
                           {"stack", stackJson(site.stack)},
                           {"pid", site.pid},
                           {"stack_id", site.stack_id}});
    }
    return out;
}

Json spaceJson(const InsideSegmentsReport& m) {
    Json streams = Json::array();
    for (const StreamSpaceReport& st : m.streams) {
        streams.push_back(Json{{"stream", hex(st.stream)},
                               {"reserved_bytes", st.reserved_bytes},
                               {"allocated_bytes", st.allocated_bytes},
                               {"free_bytes", st.free_bytes},
                               {"largest_free_bytes", st.largest_free_bytes}});
    }
    Json segments = Json::array();
    for (const SegmentSpaceReport& seg : m.segments) {
        segments.push_back(Json{{"address", hex(seg.address)},
                                {"bytes", seg.bytes},
                                {"allocated_bytes", seg.allocated_bytes},
                                {"free_bytes", seg.free_bytes},
                                {"largest_free_bytes", seg.largest_free_bytes},
                                {"stream", hex(seg.stream)},
                                {"expandable", seg.expandable}});
    }
    return Json{{"pid", m.pid},
                {"moment", m.moment == Moment::Failure ? "oom" : std::string(momentName(m.moment))},
                {"time_ns", m.time_ns},
                {"device", m.device},
                {"exact", m.exact},
                {"reserved_bytes", m.reserved_bytes},
                {"allocated_bytes", m.allocated_bytes},
                {"active_bytes", m.active_bytes},
                {"requested_bytes", m.requested_bytes},
                {"reserved_unallocated_bytes", m.reserved_unallocated_bytes},
                {"free_bytes", m.free_bytes},
                {"inactive_split_blocks", m.inactive_split_blocks},
                {"inactive_split_bytes", m.inactive_split_bytes},
                {"releasable_bytes", m.releasable_bytes},
                {"largest_free_bytes", m.largest_free_bytes},
                {"streams", std::move(streams)},
                {"segments", std::move(segments)},
                {"segment_count", m.segment_count}};
}

Json cachingJson(const CachingReport& c, const StackJson& stackJson) {
    Json processes = Json::array();
    for (const CachingAllocatorReport& a : c.processes) {
        Json devices = Json::array();
        for (const CachingDeviceReport& d : a.devices) {
            devices.push_back(Json{{"device", d.device},
                                   {"allocated_peak_bytes", d.allocated_peak_bytes},
                                   {"allocated_peak_time_ns", d.allocated_peak_time_ns},
                                   {"reserved_peak_bytes", d.reserved_peak_bytes},
                                   {"reserved_peak_time_ns", d.reserved_peak_time_ns},
                                   {"allocations", d.allocations},
                                   {"frees", d.frees},
                                   {"allocated_end_bytes", d.allocated_end_bytes},
                                   {"reserved_end_bytes", d.reserved_end_bytes}});
        }
        processes.push_back(
            Json{{"pid", a.pid},
                 {"allocator", text(a.allocator)},
                 {"version", text(a.version)},
                 {"status", text(a.status)},
                 {"detail", text(a.detail)},
                 {"config", text(a.config)},
                 {"sizes_exact", a.sizes_exact},
                 {"estimated_blocks", a.estimated_blocks},
                 {"unmatched_events", a.unmatched_events},
                 {"devices", std::move(devices)},
                 {"exit_freed_bytes", a.exit_freed.bytes},
                 {"exit_freed_blocks", a.exit_freed.blocks},
                 {"exit_freed_sites", a.exit_freed.sites},
                 {"exit_freed_top_sites", heldSitesJson(a.exit_freed.top_sites, stackJson)},
                 {"exit_kept_bytes", a.exit_kept.bytes},
                 {"exit_kept_blocks", a.exit_kept.blocks},
                 {"exit_kept_sites", a.exit_kept.sites},
                 {"exit_kept_top_sites", heldSitesJson(a.exit_kept.top_sites, stackJson)}});
    }
    // Each stack is written where it stands in the document, in order (the HTML page numbers
    // its frames as they come).
    Json tensor_peak_sites = peakSitesJson(c.tensor_peak.top_sites, stackJson);
    Json fragmentation = Json::array();
    for (const InsideSegmentsReport& m : c.fragmentation) {
        fragmentation.push_back(spaceJson(m));
    }
    Json ooms = Json::array();
    for (const CachingOomReport& o : c.ooms) {
        Json hints = Json::array();
        for (const OomHint& h : o.hints) {
            hints.push_back(Json{{"remedy", text(h.remedy)},
                                 {"verdict", text(h.verdict)},
                                 {"estimate", h.estimate},
                                 {"why", text(h.why)}});
        }
        ooms.push_back(Json{{"pid", o.pid},
                            {"time_ns", o.time_ns},
                            {"device", o.device},
                            {"stream", hex(o.stream)},
                            {"requested_bytes", o.requested_bytes},
                            {"device_free_bytes", o.device_free_bytes},
                            {"released_bytes", o.released_bytes},
                            {"fragmentation", o.fragmentation},
                            {"diagnosis", text(o.diagnosis)},
                            {"hints", std::move(hints)},
                            {"stack", stackJson(o.stack)},
                            {"space", spaceJson(o.space)}});
    }
    return Json{{"processes", std::move(processes)},
                {"tensor_peak", Json{{"bytes", c.tensor_peak.bytes},
                                     {"time_ns", c.tensor_peak.time_ns},
                                     {"top_sites", std::move(tensor_peak_sites)}}},
                {"fragmentation", std::move(fragmentation)},
                {"ooms", std::move(ooms)}};
}

// What the framework support adds (docs/analysis.md, "Held by a caching allocator at
// exit"), in its own function so that the rest of the report stays as it was.
void frameworksJson(const Report& r, Json& report, const StackJson& stackJson) {
    report["summary"]["held_at_exit_bytes"] = r.summary.held_at_exit_bytes;
    report["summary"]["held_at_exit_allocations"] = r.summary.held_at_exit_allocations;
    Json held = Json::array();
    for (const HeldReport& h : r.held_at_exit) {
        Json sites = heldSitesJson(h.top_sites, stackJson);
        held.push_back(Json{{"pid", h.pid},
                            {"allocator", text(h.allocator)},
                            {"bytes", h.bytes},
                            {"allocations", h.allocations},
                            {"sites", h.sites},
                            {"top_sites", std::move(sites)}});
    }
    report["held_at_exit"] = std::move(held);
    report["caching_allocator"] = r.caching ? cachingJson(*r.caching, stackJson) : Json(nullptr);
}

} // namespace

Json toJson(const Report& r) {
    return toJson(r, frameObjects);
}

Json toJson(const Report& r, const StackJson& stackJson) {
    Json report;
    report["schema_version"] = r.schema_version;
    report["generator"] = text(r.generator);
    Json processes = Json::array();
    for (const ProcessReport& p : r.processes) {
        processes.push_back(processJson(p));
    }
    report["processes"] = std::move(processes);
    const Summary& s = r.summary;
    report["summary"] = Json{{"allocations", s.allocations},
                             {"frees", s.frees},
                             {"failed_allocations", s.failed_allocations},
                             {"errors", s.errors},
                             {"leaked_bytes", s.leaked_bytes},
                             {"leaked_allocations", s.leaked_allocations},
                             {"peak_bytes", s.peak_bytes},
                             {"peak_time_ns", s.peak_time_ns},
                             {"leak_groups", s.leak_groups},
                             {"teardown_released_bytes", s.teardown_released_bytes},
                             {"uncertain_errors", s.uncertain_errors},
                             {"uncertain_leaked_bytes", s.uncertain_leaked_bytes}};

    Json kinds = Json::object();
    for (const KindReport& k : r.kinds) {
        kinds[std::string(format::kindName(k.kind))] =
            Json{{"allocations", k.allocations},
                 {"peak_bytes", k.peak_bytes},
                 {"leaked_bytes", k.leaked_bytes},
                 {"leaked_allocations", k.leaked_allocations}};
    }
    report["kinds"] = std::move(kinds);

    Json devices = Json::array();
    for (const DeviceReport& d : r.devices) {
        devices.push_back(Json{{"ordinal", d.ordinal},
                               {"name", text(d.name)},
                               {"total_bytes", d.total_bytes},
                               {"peak_bytes", d.peak_bytes},
                               {"peak_time_ns", d.peak_time_ns},
                               {"leaked_bytes", d.leaked_bytes},
                               {"granularity", d.granularity}});
    }
    report["devices"] = std::move(devices);

    Json leaks = Json::array();
    for (const LeakSite& l : r.leaks) {
        leaks.push_back(Json{{"bytes", l.bytes},
                             {"allocations", l.allocations},
                             {"kind", format::kindName(l.kind)},
                             {"api", text(l.api)},
                             {"stack", stackJson(l.stack)},
                             {"released_by_teardown", l.released_by_teardown},
                             {"pid", l.pid},
                             {"stack_id", l.stack_id},
                             {"uncertain_bytes", l.uncertain_bytes},
                             {"uncertain_allocations", l.uncertain_allocations}});
    }
    report["leaks"] = std::move(leaks);
    const LeakScope& scope = r.leak_scope;
    report["leak_scope"] = Json{{"phase", scope.phase ? Json(text(*scope.phase)) : Json(nullptr)},
                                {"bytes", scope.bytes},
                                {"allocations", scope.allocations},
                                {"sites", scope.sites},
                                {"suppressed_bytes", scope.suppressed_bytes},
                                {"suppressed_allocations", scope.suppressed_allocations},
                                {"suppressed_sites", scope.suppressed_sites},
                                {"uncertain_bytes", scope.uncertain_bytes},
                                {"uncertain_allocations", scope.uncertain_allocations}};

    Json top_sites = Json::array();
    for (const PeakSite& site : r.peak.top_sites) {
        top_sites.push_back(Json{{"bytes", site.bytes},
                                 {"allocations", site.allocations},
                                 {"stack", stackJson(site.stack)},
                                 {"pid", site.pid},
                                 {"stack_id", site.stack_id}});
    }
    report["peak"] = Json{
        {"bytes", r.peak.bytes}, {"time_ns", r.peak.time_ns}, {"top_sites", std::move(top_sites)}};

    Json fragmentation = Json::array();
    for (const FragmentationReport& f : r.fragmentation) {
        Json holes = Json::array();
        for (const HoleReport& h : f.holes) {
            holes.push_back(Json{{"address", hex(h.address)}, {"bytes", h.bytes}});
        }
        Json pins = Json::array();
        for (const PinReport& pin : f.pinning) {
            pins.push_back(Json{{"address", hex(pin.address)},
                                {"bytes", pin.bytes},
                                {"pinned_bytes", pin.pinned_bytes},
                                {"kind", format::kindName(pin.kind)},
                                {"api", text(pin.api)},
                                {"stack", stackJson(pin.stack)}});
        }
        fragmentation.push_back(Json{{"moment", momentName(f.moment)},
                                     {"time_ns", f.time_ns},
                                     {"device", f.device},
                                     {"granularity", f.granularity},
                                     {"hole_bytes", f.hole_bytes},
                                     {"largest_hole_bytes", f.largest_hole_bytes},
                                     {"ratio", f.ratio},
                                     {"holes", std::move(holes)},
                                     {"hole_count", f.hole_count},
                                     {"pinning", std::move(pins)},
                                     {"pid", f.pid},
                                     {"exact", f.exact},
                                     {"live_bytes", f.live_bytes},
                                     {"device_total_bytes", f.device_total_bytes},
                                     {"layout", f.layout ? layoutJson(*f.layout) : Json(nullptr)}});
    }
    report["fragmentation"] = std::move(fragmentation);

    Json failures = Json::array();
    for (const FailureReport& f : r.failures) {
        failures.push_back(Json{{"time_ns", f.time_ns},
                                {"api", text(f.api)},
                                {"requested_bytes", f.requested_bytes},
                                {"error", text(f.error)},
                                {"live_bytes", f.live_bytes},
                                {"device_free_bytes", optional(f.device_free_bytes)},
                                {"largest_hole_bytes", optional(f.largest_hole_bytes)},
                                {"diagnosis", text(f.diagnosis)},
                                {"stack", stackJson(f.stack)},
                                {"result", f.result},
                                {"device", f.device},
                                {"device_total_bytes", f.device_total_bytes},
                                {"kind", text(f.kind)},
                                {"pid", f.pid}});
    }
    report["failures"] = std::move(failures);

    Json errors = Json::array();
    for (const ErrorReport& e : r.errors) {
        errors.push_back(Json{{"type", errorTypeName(e.type)},
                              {"api", text(e.api)},
                              {"address", hex(e.address)},
                              {"time_ns", e.time_ns},
                              {"stack", stackJson(e.stack)},
                              {"allocation_stack", stackJson(e.allocation_stack)},
                              {"allocation_api", text(e.allocation_api)},
                              {"detail", text(e.detail)},
                              {"result", e.result},
                              {"pid", e.pid},
                              {"uncertain", e.uncertain}});
    }
    report["errors"] = std::move(errors);

    Json timeline = Json::array();
    for (const TimelineReport& t : r.timeline) {
        Json points = Json::array();
        for (const auto& [time, bytes] : t.points) {
            points.push_back(Json::array({time, bytes}));
        }
        timeline.push_back(Json{{"device", t.device}, {"points", std::move(points)}});
    }
    report["timeline"] = std::move(timeline);

    Json phases = Json::array();
    for (const PhaseReport& p : r.phases) {
        phases.push_back(Json{{"pid", p.pid},
                              {"name", text(p.name)},
                              {"occurrences", p.occurrences},
                              {"first_time_ns", p.first_time_ns},
                              {"duration_ns", p.duration_ns},
                              {"allocations", p.allocations},
                              {"allocated_bytes", p.allocated_bytes},
                              {"frees", p.frees},
                              {"peak_bytes", p.peak_bytes},
                              {"peak_time_ns", p.peak_time_ns},
                              {"leaked_bytes", p.leaked_bytes},
                              {"leaked_allocations", p.leaked_allocations},
                              {"path", textList(p.path)},
                              {"peak_above_start_bytes", p.peak_above_start_bytes}});
    }
    report["phases"] = std::move(phases);

    Json iterations = Json::array();
    for (const IterationReport& it : r.iterations) {
        iterations.push_back(Json{{"pid", it.pid},
                                  {"source", it.source},
                                  {"phase", text(it.phase)},
                                  {"stack", stackJson(it.stack)},
                                  {"stack_id", it.stack_id},
                                  {"boundaries", it.boundaries},
                                  {"note", text(it.note)},
                                  {"growing_sites", it.growing_sites},
                                  {"growth_bytes_per_iteration", it.growth_bytes_per_iteration}});
    }
    report["iterations"] = std::move(iterations);
    Json growth = Json::array();
    for (const GrowthSite& g : r.growth) {
        growth.push_back(Json{{"pid", g.pid},
                              {"bytes_per_iteration", g.bytes_per_iteration},
                              {"first_iteration", g.first_iteration},
                              {"iterations", g.iterations},
                              {"growing_iterations", g.growing_iterations},
                              {"confidence", g.confidence},
                              {"live_bytes", g.live_bytes},
                              {"stack", stackJson(g.stack)},
                              {"stack_id", g.stack_id},
                              {"phase", textList(g.phase)}});
    }
    report["growth"] = std::move(growth);
    const GrowthScope& gs = r.growth_scope;
    Json ranks = Json::array();
    for (const RankRow& row : r.ranks) {
        ranks.push_back(Json{{"rank", row.rank},
                             {"host", text(row.host)},
                             {"pid", row.pid},
                             {"command", text(row.command)},
                             {"peak_bytes", row.peak_bytes},
                             {"device_peaks", devicePeaksJson(row.device_peaks)},
                             {"leaked_bytes", row.leaked_bytes},
                             {"growth_bytes_per_iteration", row.growth_bytes_per_iteration},
                             {"failed_allocations", row.failed_allocations},
                             {"errors", row.errors},
                             {"outlier", textList(row.outlier)}});
    }
    report["ranks"] = std::move(ranks);
    report["growth_scope"] = Json{{"phase", gs.phase ? Json(text(*gs.phase)) : Json(nullptr)},
                                  {"sites", gs.sites},
                                  {"bytes_per_iteration", gs.bytes_per_iteration}};
    detailJson(r, report, stackJson);
    frameworksJson(r, report, stackJson);
    return report;
}

} // namespace gmt::analyzer
