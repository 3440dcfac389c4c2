#include "read/record_json.h"

#include "base/hex.h"
#include "read/python_code.h"

namespace gmt::analyzer {

Json headerJson(const format::HeaderInfo& h) {
    return Json{{"pid", h.pid},
                {"ppid", h.ppid},
                {"start_wall_ns", h.start_wall_ns},
                {"start_mono_ns", h.start_mono_ns},
                {"driver_version", h.driver_version},
                {"stack_depth", h.stack_depth},
                {"granularity", h.granularity},
                {"command", h.command},
                {"command_bytes", h.command_bytes},
                {"command_truncated", h.commandTruncated()},
                {"executable", h.executable},
                {"host", h.host},
                {"tracer_version", h.tracer_version},
                {"rank", h.rank},
                {"local_rank", h.local_rank},
                {"world_size", h.world_size},
                {"rank_source", h.rank_source},
                {"python_version", pythonVersionText(h.python_version)},
                {"python_status", format::pythonStatusName(h.python_status)}};
}

Json eventJson(const format::Event& e) {
    Json j{{"event", format::opName(e.op)},
           {"api", format::eventApiName(e.op, e.api)},
           {"kind", format::kindName(e.kind)},
           {"result", e.result},
           {"address", hex(e.address)},
           {"size", e.size},
           {"device", e.device},
           {"tid", e.tid},
           {"time_ns", e.time_ns},
           {"stack", e.stack_id}};
    if (e.actual_size) {
        j["actual_size"] = e.actual_size;
    }
    if (e.handle) {
        j["handle"] = hex(e.handle);
    }
    if (e.stream) {
        j["stream"] = hex(e.stream);
    }
    if (e.context) {
        j["context"] = hex(e.context);
    }
    if (e.offset) {
        j["offset"] = e.offset;
    }
    if (e.device_free || e.device_total) {
        j["device_free"] = e.device_free;
        j["device_total"] = e.device_total;
    }
    if (e.flags) {
        j["flags"] = e.flags;
        if (e.flags & format::kFlagHostLocated) {
            j["host_located"] = true;
        }
        if (e.flags & format::kFlagImported) {
            j["imported"] = true;
        }
        if (e.op == format::Op::Block && (e.flags & format::kFlagInterpreterExiting)) {
            j["interpreter_exiting"] = true;
        }
    }
    return j;
}

Json recordJson(const Record& r, const format::Prologue& prologue) {
    Json j;
    switch (r.tag) {
    case format::RecordTag::Header:
        j = Json{{"record", "header"}};
        j.update(headerJson(r.header));
        j["format_version"] = prologue.format_version;
        j["ring_slots"] = prologue.ring_slots;
        j["prologue_dropped_events"] = prologue.dropped_events;
        j["log_failed"] = (prologue.flags & format::kPrologueLogFailed) != 0;
        j["out_of_memory"] = (prologue.flags & format::kPrologueOutOfMemory) != 0;
        break;
    case format::RecordTag::Device:
        j = Json{{"record", "device"},
                 {"ordinal", r.device.ordinal},
                 {"name", r.device.name},
                 {"total_bytes", r.device.total_bytes},
                 {"granularity", r.device.granularity}};
        break;
    case format::RecordTag::Module:
        j = Json{{"record", "module"},         {"path", r.module.path},
                 {"base", hex(r.module.base)}, {"start", hex(r.module.start)},
                 {"end", hex(r.module.end)},   {"build_id", bytesHex(r.module.build_id)}};
        break;
    case format::RecordTag::Stack: {
        Json frames = Json::array();
        for (uint32_t i = 0; i < r.stack.depth; ++i) {
            frames.push_back(hex(r.stack.frames[i]));
        }
        j = Json{{"record", "stack"}, {"id", r.stack.id}, {"frames", std::move(frames)}};
        if (r.stack.python_depth > 0) {
            Json python = Json::array();
            for (uint32_t i = 0; i < r.stack.python_depth; ++i) {
                const format::PythonFrame& f = r.stack.python[i];
                python.push_back(Json{
                    {"code", f.code_id}, {"instruction", f.instruction}, {"position", f.position}});
            }
            j["python"] = std::move(python);
        }
        break;
    }
    case format::RecordTag::PythonCode:
        j = Json{{"record", "python_code"},
                 {"id", r.python_code.id},
                 {"filename", r.python_code.filename},
                 {"name", r.python_code.name},
                 {"first_line", r.python_code.first_line},
                 {"line_table_format", static_cast<int>(r.python_code.table_format)},
                 {"line_table", bytesHex(r.python_code.line_table)}};
        break;
    case format::RecordTag::Event:
        j = Json{{"record", "event"}};
        j.update(eventJson(r.event));
        break;
    case format::RecordTag::Trailer:
        j = Json{{"record", "trailer"},
                 {"events", r.trailer.events},
                 {"dropped_events", r.trailer.dropped_events},
                 {"end_mono_ns", r.trailer.end_mono_ns},
                 {"end_wall_ns", r.trailer.end_wall_ns},
                 {"exit_signal", r.trailer.exit_signal},
                 {"in_flight", r.trailer.in_flight},
                 {"python_status", format::pythonStatusName(r.trailer.python_status)}};
        break;
    case format::RecordTag::Phase:
        j = Json{{"record", "phase"},
                 {"time_ns", r.phase.time_ns},
                 {"name", r.phase.name},
                 {"kind", format::phaseKindName(r.phase.kind)},
                 {"tid", r.phase.tid}};
        break;
    case format::RecordTag::CachingAllocator:
        j = Json{{"record", "caching_allocator"},
                 {"source", static_cast<int>(r.caching_allocator.source)},
                 {"status", format::cachingAllocatorStatusName(r.caching_allocator.status)},
                 {"time_ns", r.caching_allocator.time_ns},
                 {"version", r.caching_allocator.version},
                 {"detail", r.caching_allocator.detail},
                 {"config", r.caching_allocator.config}};
        break;
    case format::RecordTag::Recording:
        j = Json{{"record", "recording"},
                 {"time_ns", r.recording.time_ns},
                 {"change", format::recordingChangeName(r.recording.change)},
                 {"cause", format::recordingCauseName(r.recording.cause)}};
        break;
    case format::RecordTag::AggregateSummary:
        j = Json{{"record", "aggregate_summary"},
                 {"events", r.aggregate.events},
                 {"folded_allocations", r.aggregate.folded_allocations},
                 {"folded_bytes", r.aggregate.folded_bytes},
                 {"folded_frees", r.aggregate.folded_frees},
                 {"kept_events", r.aggregate.kept_events},
                 {"folded_errors", r.aggregate.folded_errors},
                 {"folded_phases", r.aggregate.folded_phases},
                 {"budget", r.aggregate.budget},
                 {"over_budget", r.aggregate.over_budget},
                 {"sequence", r.aggregate.sequence},
                 {"folded_estimated_blocks", r.aggregate.folded_estimated_blocks}};
        break;
    case format::RecordTag::SiteTotals:
        j = Json{{"record", "site_totals"},
                 {"stack", r.site_totals.stack},
                 {"device", r.site_totals.device},
                 {"kind", format::kindName(static_cast<format::Kind>(r.site_totals.kind))},
                 {"allocations", r.site_totals.allocations},
                 {"bytes", r.site_totals.bytes},
                 {"largest", r.site_totals.largest}};
        break;
    case format::RecordTag::PhaseTotals:
        j = Json{{"record", "phase_totals"},
                 {"allocations", r.phase_totals.allocations},
                 {"bytes", r.phase_totals.bytes},
                 {"frees", r.phase_totals.frees}};
        break;
    case format::RecordTag::FoldedPeak:
        j = Json{{"record", "folded_peak"},
                 {"after_ns", r.folded_peak.after_ns},
                 {"bytes", r.folded_peak.bytes}};
        break;
    case format::RecordTag::FoldedMark: {
        Json sites = Json::array();
        for (const format::FoldedSiteChange& c : r.folded_mark.sites) {
            sites.push_back(Json{{"stack", c.stack}, {"bytes", c.bytes}});
        }
        j = Json{{"record", "folded_mark"}, {"level", r.folded_mark.level}, {"sites", sites}};
        break;
    }
    }
    if (r.from_ring) {
        j["recovered"] = true;
    }
    return j;
}

} // namespace gmt::analyzer
