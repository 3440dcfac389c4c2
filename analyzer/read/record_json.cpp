#include "read/record_json.h"

#include "base/hex.h"
#include "base/json_sink.h"
#include "read/python_code.h"

#include <string_view>

namespace gmt::analyzer {

namespace {

// The members of one record's object, in the order `dump` has always written them.
template <typename Sink> class RecordWriter {
  public:
    explicit RecordWriter(Sink& sink) : sink_(sink) {}

    template <typename T> void field(std::string_view name, const T& value) {
        sink_.key(name);
        sink_.value(value);
    }
    void hexField(std::string_view name, uint64_t value) { field(name, HexText(value).view()); }
    void hexValue(uint64_t value) { sink_.value(HexText(value).view()); }
    void key(std::string_view name) { sink_.key(name); }
    void beginObject() { sink_.beginObject(); }
    void beginArray() { sink_.beginArray(); }
    void end() { sink_.end(); }

    void header(const format::HeaderInfo& h) {
        field("pid", h.pid);
        field("ppid", h.ppid);
        field("start_wall_ns", h.start_wall_ns);
        field("start_mono_ns", h.start_mono_ns);
        field("driver_version", h.driver_version);
        field("stack_depth", h.stack_depth);
        field("granularity", h.granularity);
        field("command", h.command);
        field("command_bytes", h.command_bytes);
        field("command_truncated", h.commandTruncated());
        field("executable", h.executable);
        field("host", h.host);
        field("tracer_version", h.tracer_version);
        field("rank", h.rank);
        field("local_rank", h.local_rank);
        field("world_size", h.world_size);
        field("rank_source", h.rank_source);
        field("python_version", pythonVersionText(h.python_version));
        field("python_status", format::pythonStatusName(h.python_status));
    }

    void event(const format::Event& e) {
        field("event", format::opName(e.op));
        field("api", format::eventApiName(e.op, e.api));
        field("kind", format::kindName(e.kind));
        field("result", e.result);
        hexField("address", e.address);
        field("size", e.size);
        field("device", e.device);
        field("tid", e.tid);
        field("time_ns", e.time_ns);
        field("stack", e.stack_id);
        if (e.actual_size) {
            field("actual_size", e.actual_size);
        }
        if (e.handle) {
            hexField("handle", e.handle);
        }
        if (e.stream) {
            hexField("stream", e.stream);
        }
        if (e.context) {
            hexField("context", e.context);
        }
        if (e.offset) {
            field("offset", e.offset);
        }
        if (e.device_free || e.device_total) {
            field("device_free", e.device_free);
            field("device_total", e.device_total);
        }
        if (e.flags) {
            field("flags", e.flags);
            if (e.flags & format::kFlagHostLocated) {
                field("host_located", true);
            }
            if (e.flags & format::kFlagImported) {
                field("imported", true);
            }
            if (e.op == format::Op::Block && (e.flags & format::kFlagInterpreterExiting)) {
                field("interpreter_exiting", true);
            }
        }
    }

    void stack(const format::StackInfo& s) {
        field("id", s.id);
        key("frames");
        beginArray();
        for (uint32_t i = 0; i < s.depth; ++i) {
            hexValue(s.frames[i]);
        }
        end();
        if (s.python_depth > 0) {
            key("python");
            beginArray();
            for (uint32_t i = 0; i < s.python_depth; ++i) {
                const format::PythonFrame& f = s.python[i];
                beginObject();
                field("code", f.code_id);
                field("instruction", f.instruction);
                field("position", f.position);
                end();
            }
            end();
        }
    }

    void record(const Record& r, const format::Prologue& prologue) {
        beginObject();
        members(r, prologue);
        if (r.from_ring) {
            field("recovered", true);
        }
        end();
    }

  private:
    void members(const Record& r, const format::Prologue& prologue);

    Sink& sink_;
};

template <typename Sink>
void RecordWriter<Sink>::members(const Record& r, const format::Prologue& prologue) {
    switch (r.tag) {
    case format::RecordTag::Header:
        field("record", "header");
        header(r.header);
        field("format_version", prologue.format_version);
        field("ring_slots", prologue.ring_slots);
        field("prologue_dropped_events", prologue.dropped_events);
        field("log_failed", (prologue.flags & format::kPrologueLogFailed) != 0);
        field("out_of_memory", (prologue.flags & format::kPrologueOutOfMemory) != 0);
        return;
    case format::RecordTag::Device:
        field("record", "device");
        field("ordinal", r.device.ordinal);
        field("name", r.device.name);
        field("total_bytes", r.device.total_bytes);
        field("granularity", r.device.granularity);
        return;
    case format::RecordTag::Module:
        field("record", "module");
        field("path", r.module.path);
        hexField("base", r.module.base);
        hexField("start", r.module.start);
        hexField("end", r.module.end);
        field("build_id", bytesHex(r.module.build_id));
        return;
    case format::RecordTag::Stack:
        field("record", "stack");
        stack(r.stack);
        return;
    case format::RecordTag::PythonCode:
        field("record", "python_code");
        field("id", r.python_code.id);
        field("filename", r.python_code.filename);
        field("name", r.python_code.name);
        field("first_line", r.python_code.first_line);
        field("line_table_format", static_cast<int>(r.python_code.table_format));
        field("line_table", bytesHex(r.python_code.line_table));
        return;
    case format::RecordTag::Event:
        field("record", "event");
        event(r.event);
        return;
    case format::RecordTag::Trailer:
        field("record", "trailer");
        field("events", r.trailer.events);
        field("dropped_events", r.trailer.dropped_events);
        field("end_mono_ns", r.trailer.end_mono_ns);
        field("end_wall_ns", r.trailer.end_wall_ns);
        field("exit_signal", r.trailer.exit_signal);
        field("in_flight", r.trailer.in_flight);
        field("python_status", format::pythonStatusName(r.trailer.python_status));
        return;
    case format::RecordTag::Phase:
        field("record", "phase");
        field("time_ns", r.phase.time_ns);
        field("name", r.phase.name);
        field("kind", format::phaseKindName(r.phase.kind));
        field("tid", r.phase.tid);
        return;
    case format::RecordTag::CachingAllocator:
        field("record", "caching_allocator");
        field("source", static_cast<int>(r.caching_allocator.source));
        field("status", format::cachingAllocatorStatusName(r.caching_allocator.status));
        field("time_ns", r.caching_allocator.time_ns);
        field("version", r.caching_allocator.version);
        field("detail", r.caching_allocator.detail);
        field("config", r.caching_allocator.config);
        return;
    case format::RecordTag::Recording:
        field("record", "recording");
        field("time_ns", r.recording.time_ns);
        field("change", format::recordingChangeName(r.recording.change));
        field("cause", format::recordingCauseName(r.recording.cause));
        return;
    case format::RecordTag::AggregateSummary:
        field("record", "aggregate_summary");
        field("events", r.aggregate.events);
        field("folded_allocations", r.aggregate.folded_allocations);
        field("folded_bytes", r.aggregate.folded_bytes);
        field("folded_frees", r.aggregate.folded_frees);
        field("kept_events", r.aggregate.kept_events);
        field("folded_errors", r.aggregate.folded_errors);
        field("folded_phases", r.aggregate.folded_phases);
        field("budget", r.aggregate.budget);
        field("over_budget", r.aggregate.over_budget);
        field("sequence", r.aggregate.sequence);
        field("folded_estimated_blocks", r.aggregate.folded_estimated_blocks);
        return;
    case format::RecordTag::SiteTotals:
        field("record", "site_totals");
        field("stack", r.site_totals.stack);
        field("device", r.site_totals.device);
        field("kind", format::kindName(static_cast<format::Kind>(r.site_totals.kind)));
        field("allocations", r.site_totals.allocations);
        field("bytes", r.site_totals.bytes);
        field("largest", r.site_totals.largest);
        return;
    case format::RecordTag::PhaseTotals:
        field("record", "phase_totals");
        field("allocations", r.phase_totals.allocations);
        field("bytes", r.phase_totals.bytes);
        field("frees", r.phase_totals.frees);
        return;
    case format::RecordTag::FoldedPeak:
        field("record", "folded_peak");
        field("after_ns", r.folded_peak.after_ns);
        field("bytes", r.folded_peak.bytes);
        return;
    case format::RecordTag::FoldedMark:
        field("record", "folded_mark");
        field("level", r.folded_mark.level);
        key("sites");
        beginArray();
        for (const format::FoldedSiteChange& c : r.folded_mark.sites) {
            beginObject();
            field("stack", c.stack);
            field("bytes", c.bytes);
            end();
        }
        end();
        return;
    }
}

} // namespace

template <typename Sink>
void writeRecordJson(const Record& r, const format::Prologue& prologue, Sink& sink) {
    RecordWriter<Sink>(sink).record(r, prologue);
}
template void writeRecordJson(const Record&, const format::Prologue&, JsonTreeSink&);
template void writeRecordJson(const Record&, const format::Prologue&, JsonTextSink&);

Json recordJson(const Record& r, const format::Prologue& prologue) {
    JsonTreeSink sink;
    writeRecordJson(r, prologue, sink);
    return sink.take();
}

} // namespace gmt::analyzer
