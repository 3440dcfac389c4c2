// Prints where the bytes of a trace go, as one JSON object, for the bytes-per-event figure
// of scripts/bench-recorder.sh. Reads only trace_format.h's framing (not the analyzer), so
// the measurement does not depend on the code under test beyond the format itself.
//
//   trace_stats FILE
//   {"file_bytes":…,"log_offset":…,"log_bytes":…,"frames":…,"events":…,
//    "event_record_bytes":…,"stacks":…,"stack_record_bytes":…,"max_stack_depth":…,
//    "modules":…,"module_record_bytes":…,"trailer_events":…,"complete":…}
#include <gpumemtrace/trace_format.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <vector>

namespace tf = gmt::format;

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s TRACE\n", argv[0]);
        return 2;
    }
    std::ifstream in(argv[1], std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "cannot open %s\n", argv[1]);
        return 2;
    }
    tf::Prologue p{};
    in.read(reinterpret_cast<char*>(&p), sizeof p);
    if (!in || std::memcmp(p.magic, tf::kMagic, sizeof p.magic) != 0 ||
        p.checksum != tf::prologueChecksum(p)) {
        std::fprintf(stderr, "%s: not a gmtrace file\n", argv[1]);
        return 2;
    }
    in.seekg(0, std::ios::end);
    const uint64_t file_bytes = static_cast<uint64_t>(in.tellg());

    uint64_t frames = 0, events = 0, event_bytes = 0, stacks = 0, stack_bytes = 0;
    uint64_t modules = 0, module_bytes = 0, trailer_events = 0, max_depth = 0;
    bool complete = false;
    std::vector<uint8_t> payload;
    uint64_t offset = p.log_offset;
    while (offset + sizeof(tf::FrameHeader) <= file_bytes) {
        tf::FrameHeader h{};
        in.seekg(static_cast<std::streamoff>(offset));
        in.read(reinterpret_cast<char*>(&h), sizeof h);
        if (!in || h.magic != tf::kFrameMagic || h.payload_size > tf::kMaxFramePayload) {
            break;
        }
        payload.resize(h.payload_size);
        in.read(reinterpret_cast<char*>(payload.data()), h.payload_size);
        if (!in || tf::frameChecksum(h, payload.data()) != h.checksum) {
            break;
        }
        ++frames;
        tf::ByteReader r(payload);
        while (!r.atEnd() && r.ok()) {
            const size_t before = r.remaining();
            auto tag = static_cast<tf::RecordTag>(r.byte());
            uint64_t len = r.varint();
            auto body = r.bytes(len);
            if (!r.ok()) {
                break;
            }
            const uint64_t record_bytes = before - r.remaining();
            if (tag == tf::RecordTag::Event) {
                ++events;
                event_bytes += record_bytes;
            } else if (tag == tf::RecordTag::Stack) {
                ++stacks;
                stack_bytes += record_bytes;
                tf::ByteReader sr(body);
                tf::StackInfo s;
                if (tf::decodeStack(sr, s) && s.depth > max_depth) {
                    max_depth = s.depth;
                }
            } else if (tag == tf::RecordTag::Module) {
                ++modules;
                module_bytes += record_bytes;
            } else if (tag == tf::RecordTag::Trailer) {
                tf::ByteReader tr(body);
                tf::TrailerInfo t;
                if (tf::decodeTrailer(tr, t)) {
                    trailer_events = t.events;
                    complete = true;
                }
            }
        }
        offset += sizeof h + h.payload_size;
    }
    std::printf(
        "{\"file_bytes\":%" PRIu64 ",\"log_offset\":%" PRIu64 ",\"log_bytes\":%" PRIu64
        ",\"frames\":%" PRIu64 ",\"events\":%" PRIu64 ",\"event_record_bytes\":%" PRIu64
        ",\"stacks\":%" PRIu64 ",\"stack_record_bytes\":%" PRIu64 ",\"max_stack_depth\":%" PRIu64
        ",\"modules\":%" PRIu64 ",\"module_record_bytes\":%" PRIu64 ",\"trailer_events\":%" PRIu64
        ",\"complete\":%s}\n",
        file_bytes, p.log_offset, file_bytes - p.log_offset, frames, events, event_bytes, stacks,
        stack_bytes, max_depth, modules, module_bytes, trailer_events, complete ? "true" : "false");
    return 0;
}
