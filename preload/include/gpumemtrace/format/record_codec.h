// The bytes of the records other than events (records.h), and the framing every record
// shares inside a frame or a ring blob: tag, body length, body.
#pragma once

#include <gpumemtrace/format/byte_coding.h>
#include <gpumemtrace/format/record_limits.h>
#include <gpumemtrace/format/records.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gmt::format {

// Non-event record bodies. Each encode writes the body only; see appendRecord for framing.

// The Header's rank block (see HeaderInfo), in its own functions so that later blocks
// append after it without touching it. A trace written before the block existed ends
// where it would start: the fields keep their "not known" values.
inline void encodeHeaderRank(ByteWriter& w, const HeaderInfo& h) {
    w.svarint(h.rank);
    w.svarint(h.local_rank);
    w.svarint(h.world_size);
    w.string(h.rank_source);
}

inline void decodeHeaderRank(ByteReader& r, HeaderInfo& h) {
    if (!r.ok() || r.atEnd()) {
        return;
    }
    h.rank = static_cast<int32_t>(r.svarint());
    h.local_rank = static_cast<int32_t>(r.svarint());
    h.world_size = static_cast<int32_t>(r.svarint());
    h.rank_source = r.string(256);
}

inline void encodeHeaderPython(ByteWriter& w, const HeaderInfo& h) {
    w.varint(h.python_version);
    w.varint(static_cast<uint8_t>(h.python_status));
}

// After the rank block, and only when the writer appended it. A status this reader does
// not know stays as written: pythonStatusName() calls it not_detected.
inline void decodeHeaderPython(ByteReader& r, HeaderInfo& h) {
    if (!r.ok() || r.atEnd()) {
        return;
    }
    h.python_version = static_cast<uint32_t>(r.varint());
    h.python_status = static_cast<PythonStatus>(r.varint());
}

inline void encodeHeaderCommand(ByteWriter& w, const HeaderInfo& h) {
    w.varint(h.command_bytes);
}

// After the Python block, and only when the writer appended it.
inline void decodeHeaderCommand(ByteReader& r, HeaderInfo& h) {
    if (!r.ok() || r.atEnd()) {
        return;
    }
    h.command_bytes = r.varint();
}

inline void encodeHeader(ByteWriter& w, const HeaderInfo& h) {
    w.varint(h.pid);
    w.varint(h.ppid);
    w.varint(h.start_wall_ns);
    w.varint(h.start_mono_ns);
    w.svarint(h.driver_version);
    w.varint(h.stack_depth);
    w.varint(h.granularity);
    w.string(h.command);
    w.string(h.executable);
    w.string(h.host);
    w.string(h.tracer_version);
    encodeHeaderRank(w, h);
    encodeHeaderPython(w, h);
    encodeHeaderCommand(w, h);
}

inline bool decodeHeader(ByteReader& r, HeaderInfo& h) {
    h.pid = static_cast<uint32_t>(r.varint());
    h.ppid = static_cast<uint32_t>(r.varint());
    h.start_wall_ns = r.varint();
    h.start_mono_ns = r.varint();
    h.driver_version = static_cast<int32_t>(r.svarint());
    h.stack_depth = static_cast<uint32_t>(r.varint());
    h.granularity = r.varint();
    h.command = r.string();
    h.executable = r.string();
    h.host = r.string();
    h.tracer_version = r.string();
    decodeHeaderRank(r, h);
    decodeHeaderPython(r, h);
    decodeHeaderCommand(r, h);
    return r.ok();
}

inline void encodeDevice(ByteWriter& w, const DeviceInfo& d) {
    w.svarint(d.ordinal);
    w.varint(d.total_bytes);
    w.varint(d.granularity);
    w.string(d.name);
}

inline bool decodeDevice(ByteReader& r, DeviceInfo& d) {
    d.ordinal = static_cast<int32_t>(r.svarint());
    d.total_bytes = r.varint();
    d.granularity = r.varint();
    d.name = r.string();
    return r.ok();
}

inline void encodeModule(ByteWriter& w, const ModuleInfo& m) {
    w.varint(m.base);
    w.varint(m.start);
    w.varint(m.end);
    w.string(m.path);
    w.string(m.build_id);
}

inline bool decodeModule(ByteReader& r, ModuleInfo& m) {
    m.base = r.varint();
    m.start = r.varint();
    m.end = r.varint();
    m.path = r.string();
    m.build_id = r.string(256);
    return r.ok();
}

// Frames are delta-coded against the previous frame (callers are neighbours in code).
// Python frames, when there are any, follow as an appended section.
inline void encodeStack(ByteWriter& w, uint32_t id, const uint64_t* frames, uint32_t depth,
                        const PythonFrame* python = nullptr, uint32_t python_depth = 0) {
    w.varint(id);
    w.varint(depth);
    uint64_t prev = 0;
    for (uint32_t i = 0; i < depth; ++i) {
        w.svarint(static_cast<int64_t>(frames[i] - prev));
        prev = frames[i];
    }
    if (python_depth > 0) {
        w.varint(python_depth);
        for (uint32_t i = 0; i < python_depth; ++i) {
            w.varint(python[i].code_id);
            w.varint(python[i].instruction);
            w.varint(python[i].position);
        }
    }
}

inline bool decodeStack(ByteReader& r, StackInfo& s) {
    s.id = static_cast<uint32_t>(r.varint());
    uint64_t depth = r.varint();
    if (!r.ok() || depth > kMaxStackDepth) {
        return false;
    }
    s.depth = static_cast<uint32_t>(depth);
    uint64_t prev = 0;
    for (uint32_t i = 0; i < s.depth; ++i) {
        prev += static_cast<uint64_t>(r.svarint());
        s.frames[i] = prev;
    }
    s.python_depth = 0;
    if (r.ok() && !r.atEnd()) {
        uint64_t n = r.varint();
        if (!r.ok() || n > kMaxPythonDepth) {
            return false;
        }
        s.python_depth = static_cast<uint32_t>(n);
        for (uint32_t i = 0; i < s.python_depth; ++i) {
            s.python[i].code_id = static_cast<uint32_t>(r.varint());
            s.python[i].instruction = static_cast<uint32_t>(r.varint());
            uint64_t position = r.varint();
            s.python[i].position = static_cast<uint32_t>(std::min<uint64_t>(position, s.depth));
        }
    }
    return r.ok();
}

inline void encodePythonCode(ByteWriter& w, const PythonCodeInfo& c) {
    w.varint(c.id);
    w.varint(static_cast<uint8_t>(c.table_format));
    w.svarint(c.first_line);
    w.string(c.filename);
    w.string(c.name);
    w.string(c.line_table);
}

inline bool decodePythonCode(ByteReader& r, PythonCodeInfo& c) {
    c.id = static_cast<uint32_t>(r.varint());
    c.table_format = static_cast<PythonLineTable>(r.varint());
    c.first_line = static_cast<int32_t>(r.svarint());
    c.filename = r.string(kMaxPythonFilename);
    c.name = r.string(kMaxPythonName);
    c.line_table = r.string(kMaxPythonLineTable);
    return r.ok();
}

inline void encodeTrailer(ByteWriter& w, const TrailerInfo& t) {
    w.varint(t.events);
    w.varint(t.dropped_events);
    w.varint(t.end_mono_ns);
    w.varint(t.end_wall_ns);
    w.svarint(t.exit_signal);
    w.varint(t.in_flight);
    w.varint(static_cast<uint8_t>(t.python_status));
}

inline bool decodeTrailer(ByteReader& r, TrailerInfo& t) {
    t.events = r.varint();
    t.dropped_events = r.varint();
    t.end_mono_ns = r.varint();
    t.end_wall_ns = r.varint();
    t.exit_signal = r.atEnd() ? 0 : static_cast<int32_t>(r.svarint());
    t.in_flight = r.atEnd() ? 0 : r.varint();
    t.python_status = r.atEnd() ? PythonStatus::NotDetected : static_cast<PythonStatus>(r.varint());
    return r.ok();
}

// The fields one by one: the recorder writes a phase from the name it was given, without
// copying it into a PhaseInfo (a std::string, an allocation on an application's thread).
inline void encodePhase(ByteWriter& w, uint64_t time_ns, std::string_view name, PhaseKind kind,
                        uint32_t tid) {
    w.varint(time_ns);
    w.string(name);
    w.varint(static_cast<uint8_t>(kind));
    w.varint(tid);
}

inline void encodePhase(ByteWriter& w, const PhaseInfo& p) {
    encodePhase(w, p.time_ns, p.name, p.kind, p.tid);
}

inline bool decodePhase(ByteReader& r, PhaseInfo& p) {
    p.time_ns = r.varint();
    p.name = r.string(kMaxPhaseName);
    p.kind = PhaseKind::Mark;
    p.tid = 0;
    if (!r.atEnd()) {
        const uint64_t kind = r.varint();
        // An unknown kind (a newer recorder) reads as a mark: its name still counts.
        p.kind = kind <= static_cast<uint8_t>(PhaseKind::Pop) ? static_cast<PhaseKind>(kind)
                                                              : PhaseKind::Mark;
        p.tid = static_cast<uint32_t>(r.varint());
    }
    return r.ok();
}

inline void encodeCachingAllocator(ByteWriter& w, const CachingAllocatorInfo& c) {
    w.varint(static_cast<uint8_t>(c.source));
    w.varint(static_cast<uint8_t>(c.status));
    w.varint(c.time_ns);
    w.string(c.version);
    w.string(c.detail);
    w.string(c.config);
}

inline bool decodeCachingAllocator(ByteReader& r, CachingAllocatorInfo& c) {
    c.source = static_cast<BlockSource>(r.varint());
    c.status = static_cast<CachingAllocatorStatus>(r.varint());
    c.time_ns = r.varint();
    c.version = r.string(256);
    c.detail = r.string(1024);
    c.config = r.string(kMaxCachingAllocatorConfig);
    return r.ok();
}

inline void encodeRecording(ByteWriter& w, const RecordingInfo& c) {
    w.varint(c.time_ns);
    w.varint(static_cast<uint8_t>(c.change));
    w.varint(static_cast<uint8_t>(c.cause));
}

inline bool decodeRecording(ByteReader& r, RecordingInfo& c) {
    c.time_ns = r.varint();
    // Another value (a newer recorder) reads as a pause: nothing after it is taken as seen.
    c.change = r.varint() == 1 ? RecordingChange::Resume : RecordingChange::Pause;
    c.cause = r.varint() == 0 ? RecordingCause::Start : RecordingCause::Control;
    return r.ok();
}

// Frames a record: tag, body length, body. `body` is a scratch writer the caller filled.
inline void appendRecord(ByteWriter& out, RecordTag tag, const uint8_t* body, size_t size) {
    out.byte(static_cast<uint8_t>(tag));
    out.varint(size);
    out.bytes(body, size);
}

} // namespace gmt::format
