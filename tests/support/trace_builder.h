// Test-only writer of trace files, built from trace_format.h exactly as the recorder
// writes them: prologue, a ring of slots, then checksummed frames of records. Tests use
// it to craft exact event sequences, torn logs, corrupt frames and ring-only records.
#pragma once

#include <gpumemtrace/trace_format.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace gmt::test {

namespace tf = gmt::format;

// Events with the fields a test usually cares about; the rest stay default.
struct Ev {
    // Every event builder goes through this one.
    static tf::Event make(uint64_t t, tf::Op op, tf::Api api, tf::Kind kind, uint64_t address,
                          uint64_t size, uint32_t stack, int16_t device) {
        tf::Event e;
        e.time_ns = t;
        e.op = op;
        e.api = api;
        e.kind = kind;
        e.address = address;
        e.size = size;
        e.stack_id = stack;
        e.device = device;
        e.tid = 100;
        return e;
    }
    static tf::Event alloc(uint64_t t, uint64_t address, uint64_t size,
                           tf::Api api = tf::Api::cudaMalloc, tf::Kind kind = tf::Kind::Device,
                           uint32_t stack = 1, int16_t device = 0) {
        return make(t, tf::Op::Alloc, api, kind, address, size, stack, device);
    }
    static tf::Event free(uint64_t t, uint64_t address, tf::Api api = tf::Api::cudaFree,
                          tf::Kind kind = tf::Kind::Device, uint32_t stack = 2,
                          int16_t device = 0) {
        return make(t, tf::Op::Free, api, kind, address, 0, stack, device);
    }
    static tf::Event failed(uint64_t t, uint64_t size, int32_t result, uint64_t device_free,
                            uint64_t device_total, tf::Api api = tf::Api::cudaMalloc,
                            uint32_t stack = 3, int16_t device = 0) {
        tf::Event e = alloc(t, 0, size, api, tf::Kind::Device, stack, device);
        e.result = result;
        e.device_free = device_free;
        e.device_total = device_total;
        return e;
    }
    static tf::Event op(uint64_t t, tf::Op op, tf::Api api, uint64_t address, uint64_t size,
                        uint64_t handle = 0, uint32_t stack = 1, int16_t device = 0) {
        tf::Event e = make(t, op, api, tf::Kind::Vmm, address, size, stack, device);
        e.handle = handle;
        return e;
    }
};

class TraceBuilder {
  public:
    explicit TraceBuilder(uint32_t ring_slots = tf::kMinRingSlots) : ring_slots_(ring_slots) {
        ring_.resize(size_t{ring_slots} * tf::kSlotSize);
    }

    // A valid prologue (checksum included) for a ring of `ring_slots`; the log follows it.
    static tf::Prologue prologue(uint32_t ring_slots, uint64_t dropped_events = 0,
                                 uint32_t version = tf::kFormatVersion) {
        tf::Prologue p{};
        std::memcpy(p.magic, tf::kMagic, sizeof p.magic);
        p.format_version = version;
        p.prologue_size = sizeof(tf::Prologue);
        p.ring_offset = tf::kPrologueSize;
        p.ring_slots = ring_slots;
        p.slot_size = tf::kSlotSize;
        p.log_offset = tf::kPrologueSize + uint64_t{ring_slots} * tf::kSlotSize;
        p.dropped_events = dropped_events;
        p.checksum = tf::prologueChecksum(p);
        return p;
    }

    static tf::HeaderInfo defaultHeader() {
        tf::HeaderInfo h;
        h.pid = 4242;
        h.ppid = 1;
        h.start_wall_ns = 1'700'000'000'000'000'000ull;
        h.start_mono_ns = 1'000;
        h.driver_version = 13000;
        h.stack_depth = 64;
        h.command = "./app --flag";
        h.executable = "/usr/bin/app";
        h.host = "testhost";
        h.tracer_version = "0.1.0";
        return h;
    }
    static tf::DeviceInfo defaultDevice(int ordinal = 0) {
        tf::DeviceInfo d;
        d.ordinal = ordinal;
        d.total_bytes = 80ull << 30;
        d.name = "Simulated GPU " + std::to_string(ordinal);
        return d;
    }

    // ----- log records (go into the current frame) -----
    TraceBuilder& header(const tf::HeaderInfo& h = defaultHeader()) {
        python_status_ = h.python_status;
        return body(tf::RecordTag::Header, [&](tf::ByteWriter& w) { tf::encodeHeader(w, h); });
    }
    TraceBuilder& device(const tf::DeviceInfo& d = defaultDevice()) {
        return body(tf::RecordTag::Device, [&](tf::ByteWriter& w) { tf::encodeDevice(w, d); });
    }
    TraceBuilder& module(const tf::ModuleInfo& m) {
        return body(tf::RecordTag::Module, [&](tf::ByteWriter& w) { tf::encodeModule(w, m); });
    }
    TraceBuilder& stack(uint32_t id, const std::vector<uint64_t>& frames) {
        return body(tf::RecordTag::Stack, [&](tf::ByteWriter& w) {
            tf::encodeStack(w, id, frames.data(), static_cast<uint32_t>(frames.size()));
        });
    }
    // A stack with Python frames (innermost first, placed by their positions).
    TraceBuilder& stack(uint32_t id, const std::vector<uint64_t>& frames,
                        const std::vector<tf::PythonFrame>& python) {
        return body(tf::RecordTag::Stack, [&](tf::ByteWriter& w) {
            tf::encodeStack(w, id, frames.data(), static_cast<uint32_t>(frames.size()),
                            python.data(), static_cast<uint32_t>(python.size()));
        });
    }
    TraceBuilder& pythonCode(const tf::PythonCodeInfo& c) {
        return body(tf::RecordTag::PythonCode,
                    [&](tf::ByteWriter& w) { tf::encodePythonCode(w, c); });
    }
    TraceBuilder& recording(uint64_t time_ns, tf::RecordingChange change,
                            tf::RecordingCause cause = tf::RecordingCause::Control) {
        return body(tf::RecordTag::Recording, [&](tf::ByteWriter& w) {
            tf::encodeRecording(w, {time_ns, change, cause});
        });
    }
    TraceBuilder& event(const tf::Event& e) {
        ++position_;
        return body(tf::RecordTag::Event,
                    [&](tf::ByteWriter& w) { tf::encodeEventBody(w, e, prev_); });
    }
    TraceBuilder& cachingAllocator(const tf::CachingAllocatorInfo& c) {
        return body(tf::RecordTag::CachingAllocator,
                    [&](tf::ByteWriter& w) { tf::encodeCachingAllocator(w, c); });
    }
    TraceBuilder& phase(uint64_t t, const std::string& name,
                        tf::PhaseKind kind = tf::PhaseKind::Mark, uint32_t tid = 0) {
        tf::PhaseInfo p{t, name, kind, tid};
        return body(tf::RecordTag::Phase, [&](tf::ByteWriter& w) { tf::encodePhase(w, p); });
    }
    // A nested phase (gpumemtrace_push_phase, an NVTX range) on thread `tid`, and its end.
    TraceBuilder& push(uint64_t t, const std::string& name, uint32_t tid = 100) {
        return phase(t, name, tf::PhaseKind::Push, tid);
    }
    TraceBuilder& pop(uint64_t t, uint32_t tid = 100) {
        return phase(t, "", tf::PhaseKind::Pop, tid);
    }
    TraceBuilder& trailer(const tf::TrailerInfo& t) {
        return body(tf::RecordTag::Trailer, [&](tf::ByteWriter& w) { tf::encodeTrailer(w, t); });
    }
    // Trailer whose event count is what was added so far; the Python status stays the
    // header's, as the recorder's does unless the interpreter's memory looked wrong.
    TraceBuilder& trailer(uint64_t end_mono_ns = 0, uint64_t dropped = 0) {
        tf::TrailerInfo t;
        t.events = events_;
        t.python_status = python_status_;
        t.dropped_events = dropped;
        t.end_mono_ns = end_mono_ns;
        return trailer(t);
    }
    // A record with a tag the reader does not know (must be skipped).
    TraceBuilder& unknownRecord(uint8_t tag, const std::vector<uint8_t>& body_bytes) {
        appendRaw(tag, body_bytes);
        return *this;
    }

    // Closes the current frame; the next record starts a new one.
    TraceBuilder& endFrame() {
        if (frame_records_ == 0) {
            return *this;
        }
        tf::FrameHeader h{};
        h.magic = tf::kFrameMagic;
        h.payload_size = static_cast<uint32_t>(current_.size());
        h.record_count = frame_records_;
        h.end_seq = position_;
        h.checksum = tf::frameChecksum(h, current_.data());
        frame_offsets_.push_back(tf::kPrologueSize + ring_.size() + log_.size());
        const auto* hb = reinterpret_cast<const uint8_t*>(&h);
        log_.insert(log_.end(), hb, hb + sizeof h);
        log_.insert(log_.end(), current_.begin(), current_.end());
        current_.clear();
        frame_records_ = 0;
        return *this;
    }

    // ----- ring slots (what producers committed but no frame covers) -----
    // The position of the next record, as the frames count them.
    uint64_t position() const { return position_; }

    TraceBuilder& ringEvent(uint64_t position, const tf::Event& e) {
        tf::Slot& s = slot(position);
        tf::fillEventSlot(s, e);
        s.seq = position + 1;
        return *this;
    }
    // A stack record as a Blob + BlobCont slots from `position`; `omit_part` (1-based
    // continuation index) leaves one continuation uncommitted. Returns the slots used.
    uint32_t ringStack(uint64_t position, uint32_t id, const std::vector<uint64_t>& frames,
                       uint32_t omit_part = 0) {
        std::vector<uint8_t> scratch(64 + frames.size() * 10);
        tf::ByteWriter bw(scratch.data(), scratch.size());
        tf::encodeStack(bw, id, frames.data(), static_cast<uint32_t>(frames.size()));
        std::vector<uint8_t> rec(bw.size() + 16);
        tf::ByteWriter rw(rec.data(), rec.size());
        tf::appendRecord(rw, tf::RecordTag::Stack, bw.data(), bw.size());
        rec.resize(rw.size());
        const auto length = static_cast<uint32_t>(rec.size());
        const uint32_t parts = tf::recordSlots(length);
        for (uint32_t part = 0; part < parts; ++part) {
            tf::Slot& s = slot(position + part);
            tf::fillRecordSlot(s, rec.data(), length, part);
            s.seq = part != 0 && part == omit_part ? 0 : position + part + 1;
        }
        return parts;
    }

    TraceBuilder& droppedInPrologue(uint64_t n) {
        dropped_ = n;
        return *this;
    }
    TraceBuilder& formatVersion(uint32_t v) {
        version_ = v;
        return *this;
    }

    // ----- output -----
    // Frame start offsets in the file, in order (valid after bytes()).
    const std::vector<uint64_t>& frameOffsets() const { return frame_offsets_; }

    std::vector<uint8_t> bytes() {
        endFrame();
        std::vector<uint8_t> out(tf::kPrologueSize, 0);
        const tf::Prologue p = prologue(ring_slots_, dropped_, version_);
        std::memcpy(out.data(), &p, sizeof p);
        out.insert(out.end(), ring_.begin(), ring_.end());
        out.insert(out.end(), log_.begin(), log_.end());
        return out;
    }

    static void writeFile(const std::string& path, const std::vector<uint8_t>& data) {
        std::ofstream f(path, std::ios::binary | std::ios::trunc);
        f.write(reinterpret_cast<const char*>(data.data()),
                static_cast<std::streamsize>(data.size()));
        if (!f) {
            throw std::runtime_error("cannot write " + path);
        }
    }
    std::string write(const std::string& path) {
        writeFile(path, bytes());
        return path;
    }

  private:
    template <typename F> TraceBuilder& body(tf::RecordTag tag, F&& encode) {
        // One scratch buffer for every record: traces of 10^5 records stay quick to build.
        scratch_.resize(tf::kMaxRecordSize);
        tf::ByteWriter w(scratch_.data(), scratch_.size());
        encode(w);
        if (!w.ok()) {
            throw std::runtime_error("record too large");
        }
        if (tag == tf::RecordTag::Event) {
            ++events_;
        }
        appendRaw(static_cast<uint8_t>(tag), scratch_.data(), w.size());
        return *this;
    }
    void appendRaw(uint8_t tag, const std::vector<uint8_t>& b) {
        appendRaw(tag, b.data(), b.size());
    }
    void appendRaw(uint8_t tag, const uint8_t* data, size_t size) {
        uint8_t head[16];
        tf::ByteWriter w(head, sizeof head);
        w.byte(tag);
        w.varint(size);
        current_.insert(current_.end(), head, head + w.size());
        current_.insert(current_.end(), data, data + size);
        ++frame_records_;
    }
    tf::Slot& slot(uint64_t position) {
        auto* slots = reinterpret_cast<tf::Slot*>(ring_.data());
        return slots[position & (ring_slots_ - 1)];
    }

    std::vector<uint8_t> scratch_;
    uint32_t ring_slots_;
    uint32_t version_ = tf::kFormatVersion;
    uint64_t dropped_ = 0;
    std::vector<uint8_t> ring_;
    std::vector<uint8_t> log_;
    std::vector<uint8_t> current_;
    uint32_t frame_records_ = 0;
    std::vector<uint64_t> frame_offsets_;
    uint64_t position_ = 0;
    uint64_t events_ = 0;
    tf::PythonStatus python_status_ = tf::PythonStatus::NotDetected;
    tf::EventCoder prev_{};
};

} // namespace gmt::test
