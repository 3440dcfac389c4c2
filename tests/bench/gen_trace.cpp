// Writes a synthetic trace for the analyzer benchmark: N events over a
// constant live set, in the exact layout trace_format.h documents and the recorder writes
// (prologue, an empty ring, frames of ~56 KiB of delta-coded records, header, device,
// modules, stacks, events, trailer). Streams to disk with fixed memory, so 100 M events
// need no more RAM than 1 M. tests/support/trace_builder.h builds the whole file in memory
// (and a 1 MiB scratch vector per record), which is right for tests but not for 10^8 events.
//
//   gen_trace OUT EVENTS [LIVE_SET=64] [ALLOC_STACKS=4] [RANK|-] [DEPTH=64]
//
// The live set is filled first; after that the trace alternates free / alloc on the oldest
// slot, so the number of live allocations never changes and the analyzer's memory should not.
#include <gpumemtrace/trace_format.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace tf = gmt::format;

namespace {

// The same framing limits as the recorder's log writer (preload/log_writer.h).
constexpr size_t kFrameCapacity = 64 * 1024;
constexpr size_t kFlushAt = kFrameCapacity - 8 * 1024;
constexpr uint64_t kModuleBase = 0x555555554000ull;
constexpr uint64_t kLibBase = 0x7ffff7a00000ull;
constexpr uint64_t kDeviceBase = 0x7f0000000000ull;
constexpr uint32_t kAllocStacks = 4; // default: ids 1..4 allocation sites; id 5 the free site
constexpr uint32_t kStackDepth = 64;

class FrameWriter {
  public:
    explicit FrameWriter(std::FILE* out)
        : out_(out), frame_(sizeof(tf::FrameHeader) + kFrameCapacity) {}

    template <typename Encode> void record(tf::RecordTag tag, uint64_t positions, Encode&& encode) {
        uint8_t body[4096];
        tf::ByteWriter bw(body, sizeof body);
        encode(bw);
        if (size_ + bw.size() + 16 > kFrameCapacity) {
            flush();
        }
        tf::ByteWriter w(frame_.data() + sizeof(tf::FrameHeader) + size_, kFrameCapacity - size_);
        tf::appendRecord(w, tag, body, bw.size());
        if (!bw.ok() || !w.ok()) {
            std::fprintf(stderr, "gen_trace: record does not fit\n");
            std::exit(1);
        }
        size_ += w.size();
        ++records_;
        seq_ += positions;
        if (size_ >= kFlushAt) {
            flush();
        }
    }

    void flush() {
        if (records_ == 0) {
            return;
        }
        tf::FrameHeader h{};
        h.magic = tf::kFrameMagic;
        h.payload_size = static_cast<uint32_t>(size_);
        h.record_count = records_;
        h.end_seq = seq_;
        h.checksum = tf::frameChecksum(h, frame_.data() + sizeof h);
        std::memcpy(frame_.data(), &h, sizeof h);
        if (std::fwrite(frame_.data(), 1, sizeof h + size_, out_) != sizeof h + size_) {
            std::perror("gen_trace: write");
            std::exit(1);
        }
        size_ = 0;
        records_ = 0;
    }

  private:
    std::FILE* out_;
    std::vector<uint8_t> frame_;
    size_t size_ = 0;
    uint32_t records_ = 0;
    uint64_t seq_ = 0;
};

// Slots a blob record takes in the ring, as the recorder counts sequence positions.
uint64_t blobPositions(size_t body_bytes) {
    size_t record = 1 + body_bytes; // tag, length varint, body
    for (size_t v = body_bytes;; v >>= 7) {
        ++record;
        if (v < 0x80) {
            break;
        }
    }
    return tf::recordSlots(static_cast<uint32_t>(record));
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr,
                     "usage: %s OUT EVENTS [LIVE_SET=64] [ALLOC_STACKS=4] [RANK|-] [DEPTH=64]\n",
                     argv[0]);
        return 2;
    }
    const uint64_t events = std::strtoull(argv[2], nullptr, 10);
    const uint64_t live = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 64;
    // Many distinct allocation stacks (each with frames of its own) stress what a report
    // embeds per stack (the HTML report's caps).
    const uint64_t alloc_stacks = argc > 4 ? std::strtoull(argv[4], nullptr, 10) : kAllocStacks;
    // Frames per stack: shallow stacks keep a report that lists a million of them (the
    // job-scale benchmark, bench-scale.sh) within what a disk holds.
    const uint64_t depth = argc > 6 ? std::strtoull(argv[6], nullptr, 10) : kStackDepth;
    if (events == 0 || live == 0 || alloc_stacks == 0 || alloc_stacks > 10'000'000 || depth == 0 ||
        depth > kStackDepth) {
        std::fprintf(stderr, "gen_trace: EVENTS, LIVE_SET, ALLOC_STACKS (at most 10^7) and "
                             "DEPTH (at most 64) must be positive\n");
        return 2;
    }
    std::FILE* out = std::fopen(argv[1], "wb");
    if (!out) {
        std::perror(argv[1]);
        return 2;
    }
    static char iobuf[1 << 20];
    std::setvbuf(out, iobuf, _IOFBF, sizeof iobuf);

    // Prologue and an empty ring (seq 0 everywhere: nothing committed beyond the frames).
    std::vector<uint8_t> head(tf::kPrologueSize + size_t{tf::kMinRingSlots} * tf::kSlotSize, 0);
    tf::Prologue p{};
    std::memcpy(p.magic, tf::kMagic, sizeof p.magic);
    p.format_version = tf::kFormatVersion;
    p.prologue_size = sizeof(tf::Prologue);
    p.ring_offset = tf::kPrologueSize;
    p.ring_slots = tf::kMinRingSlots;
    p.slot_size = tf::kSlotSize;
    p.log_offset = head.size();
    p.checksum = tf::prologueChecksum(p);
    std::memcpy(head.data(), &p, sizeof p);
    std::fwrite(head.data(), 1, head.size(), out);

    FrameWriter fw(out);
    const uint64_t t0 = 1'000'000'000ull;
    tf::HeaderInfo h;
    h.pid = 4242;
    h.ppid = 1;
    h.start_wall_ns = 1'700'000'000'000'000'000ull;
    h.start_mono_ns = t0;
    h.driver_version = 13000;
    h.stack_depth = kStackDepth;
    h.command = "./synthetic --events " + std::to_string(events);
    if (argc > 5 && std::string_view(argv[5]) != "-") { // one rank of a job (bench-fleet.sh)
        h.rank = static_cast<int32_t>(std::strtol(argv[5], nullptr, 10));
        h.rank_source = "RANK";
    }
    h.executable = "/usr/bin/synthetic";
    h.host = "benchhost";
    h.tracer_version = "0.1.0";
    fw.record(tf::RecordTag::Header, 0, [&](tf::ByteWriter& w) { tf::encodeHeader(w, h); });
    tf::DeviceInfo d;
    d.total_bytes = 80ull << 30;
    d.name = "Synthetic GPU";
    fw.record(tf::RecordTag::Device, 0, [&](tf::ByteWriter& w) { tf::encodeDevice(w, d); });
    fw.flush(); // the recorder writes header and devices as a frame of their own

    const uint64_t module_end = kModuleBase + 0x20000 + (alloc_stacks + 2) * 0x100;
    const tf::ModuleInfo modules[] = {
        {kModuleBase, kModuleBase, module_end, "/usr/bin/synthetic", "\x01\x02\x03\x04"},
        {kLibBase, kLibBase, kLibBase + 0x200000, "/usr/lib/libcudart.so.13", "\x05\x06\x07\x08"},
    };
    for (const auto& m : modules) {
        uint8_t tmp[512];
        tf::ByteWriter probe(tmp, sizeof tmp);
        tf::encodeModule(probe, m);
        fw.record(tf::RecordTag::Module, blobPositions(probe.size()),
                  [&](tf::ByteWriter& w) { tf::encodeModule(w, m); });
    }
    // Deep stacks like the recorder benchmark's: a few library frames, then program frames.
    const auto free_stack = static_cast<uint32_t>(alloc_stacks + 1);
    for (uint32_t id = 1; id <= free_stack; ++id) {
        uint64_t frames[kStackDepth];
        for (uint32_t i = 0; i < depth; ++i) {
            frames[i] =
                i < 3 ? kLibBase + 0x1000 + i * 0x40 : kModuleBase + 0x1200 + id * 0x100 + i;
        }
        uint8_t tmp[2048];
        tf::ByteWriter probe(tmp, sizeof tmp);
        tf::encodeStack(probe, id, frames, static_cast<uint32_t>(depth));
        fw.record(tf::RecordTag::Stack, blobPositions(probe.size()), [&](tf::ByteWriter& w) {
            tf::encodeStack(w, id, frames, static_cast<uint32_t>(depth));
        });
    }

    static constexpr uint64_t kSizes[] = {1u << 20, 3u << 20, 256u << 10, 8u << 20};
    tf::EventCoder prev{};
    uint64_t t = t0;
    uint64_t written = 0;
    auto emit = [&](const tf::Event& e) {
        fw.record(tf::RecordTag::Event, 1,
                  [&](tf::ByteWriter& w) { tf::encodeEventBody(w, e, prev); });
        ++written;
    };
    auto makeAlloc = [&](uint64_t slot, uint64_t n) {
        tf::Event e;
        e.op = tf::Op::Alloc;
        e.api = tf::Api::cudaMalloc;
        e.kind = tf::Kind::Device;
        e.address = kDeviceBase + slot * (16ull << 20);
        e.size = kSizes[n % 4];
        e.stack_id = static_cast<uint32_t>(1 + n % alloc_stacks);
        e.device = 0;
        e.tid = 4242;
        e.time_ns = t;
        return e;
    };
    uint64_t n = 0;
    for (uint64_t slot = 0; slot < live && written < events; ++slot, ++n) {
        t += 400 + n % 7;
        emit(makeAlloc(slot, n));
    }
    for (uint64_t slot = 0; written < events; slot = (slot + 1) % live, ++n) {
        tf::Event f;
        f.op = tf::Op::Free;
        f.api = tf::Api::cudaFree;
        f.kind = tf::Kind::Device;
        f.address = kDeviceBase + slot * (16ull << 20);
        f.stack_id = free_stack;
        f.device = 0;
        f.tid = 4242;
        t += 400 + n % 7;
        f.time_ns = t;
        emit(f);
        if (written < events) {
            t += 400 + n % 5;
            emit(makeAlloc(slot, n));
        }
    }
    tf::TrailerInfo tr;
    tr.events = written;
    tr.end_mono_ns = t + 1000;
    tr.end_wall_ns = h.start_wall_ns + (t + 1000 - t0);
    fw.record(tf::RecordTag::Trailer, 0, [&](tf::ByteWriter& w) { tf::encodeTrailer(w, tr); });
    fw.flush();
    if (std::fclose(out) != 0) {
        std::perror("gen_trace: close");
        return 1;
    }
    std::printf("%" PRIu64 "\n", written);
    return 0;
}
