// The reader: record order, delta state across frames, forward compatibility, torn and
// corrupt logs, ring recovery, and unusable files.
#include "read/trace_error.h"
#include "read/trace_reader.h"
#include "report_fixture.h"

#include <catch2/catch.hpp>

using namespace gmt;
using namespace gmt::test;
using analyzer::ReadStatus;
using analyzer::Record;
using analyzer::TraceError;
using format::RecordTag;

namespace {

struct Collected {
    std::vector<RecordTag> tags;
    std::vector<format::Event> events;
    std::vector<bool> from_ring;
    std::vector<format::StackInfo> stacks;
    ReadStatus status;
};

Collected readAll(const std::string& path) {
    Collected c;
    c.status = analyzer::readTrace(path, [&](const Record& r) {
        c.tags.push_back(r.tag);
        if (r.tag == RecordTag::Event) {
            c.events.push_back(r.event);
            c.from_ring.push_back(r.from_ring);
        }
        if (r.tag == RecordTag::Stack) {
            c.stacks.push_back(r.stack);
        }
    });
    return c;
}

void expectTraceError(const std::string& path, uint64_t offset, const std::string& words) {
    try {
        analyzer::TraceReader reader(path);
        FAIL("no TraceError for " << path);
    } catch (const TraceError& e) {
        CHECK(e.offset() == offset);
        CHECK_THAT(e.what(), Catch::Contains(path) && Catch::Contains(words));
    }
}

} // namespace

TEST_CASE("reader yields every record in order - events decoded across frames") {
    TempDir dir;
    TraceBuilder b;
    b.header().device().module({0x400000, 0x400000, 0x500000, "/usr/bin/app", "\x01\x02"});
    b.stack(7, {0x401234, 0x401000});
    b.event(Ev::alloc(100, 0x7f0000000000, 4096)).endFrame();
    b.event(Ev::free(200, 0x7f0000000000)).phase(250, "epoch 1");
    b.unknownRecord(200, {1, 2, 3}); // a future record type
    b.event(Ev::alloc(300, 0x7f0000200000, 8192, format::Api::cuMemAlloc_v2)).endFrame();
    b.trailer(400, 3);
    auto c = readAll(b.write(dir.file("t.gmtrace")));

    CHECK(c.tags == std::vector<RecordTag>{RecordTag::Header, RecordTag::Device, RecordTag::Module,
                                           RecordTag::Stack, RecordTag::Event, RecordTag::Event,
                                           RecordTag::Phase, RecordTag::Event, RecordTag::Trailer});
    REQUIRE(c.events.size() == 3);
    CHECK(c.events[1].op == format::Op::Free);
    CHECK(c.events[1].address == 0x7f0000000000);
    CHECK(c.events[2].size == 8192);
    CHECK(c.events[2].address == 0x7f0000200000);
    CHECK(c.events[2].api == format::Api::cuMemAlloc_v2);
    CHECK(c.events[2].time_ns == 300);
    CHECK(c.stacks.at(0).depth == 2);
    CHECK(c.stacks.at(0).frames[0] == 0x401234);
    CHECK(c.status.complete);
    CHECK(c.status.events == 3);
    CHECK(c.status.dropped_events == 3);
    CHECK(c.status.skipped_records == 1);
    CHECK_FALSE(c.status.stopped_early);
}

TEST_CASE("dropped events: the larger of trailer and prologue counts") {
    TempDir dir;
    TraceBuilder b;
    b.header().event(Ev::alloc(1, 0x1000, 1)).trailer(2, 5);
    b.droppedInPrologue(9);
    CHECK(readAll(b.write(dir.file("t.gmtrace"))).status.dropped_events == 9);
}

TEST_CASE("zeros after the last frame are the unwritten end of the log - not corruption") {
    TempDir dir;
    TraceBuilder b;
    b.header().event(Ev::alloc(1, 0x1000, 1)).trailer(2);
    auto bytes = b.bytes();
    bytes.resize(bytes.size() + 65536, 0);
    TraceBuilder::writeFile(dir.file("t.gmtrace"), bytes);
    auto c = readAll(dir.file("t.gmtrace"));
    CHECK(c.status.complete);
    CHECK_FALSE(c.status.stopped_early);
}

TEST_CASE("a torn last frame: the valid prefix is read - the stop offset is the frame's") {
    TempDir dir;
    TraceBuilder b;
    b.header().event(Ev::alloc(1, 0x1000, 10)).endFrame();
    b.event(Ev::alloc(2, 0x2000, 20)).event(Ev::alloc(3, 0x3000, 30)).trailer(4);
    auto bytes = b.bytes();
    const uint64_t second = b.frameOffsets().at(1);
    bytes.resize(bytes.size() - 5);
    TraceBuilder::writeFile(dir.file("t.gmtrace"), bytes);
    auto c = readAll(dir.file("t.gmtrace"));
    CHECK(c.events.size() == 1);
    CHECK_FALSE(c.status.complete);
    CHECK(c.status.stopped_early);
    CHECK(c.status.log_end_offset == second);
    CHECK_THAT(c.status.stop_reason, Catch::Contains("torn"));
}

TEST_CASE("a frame with a bad checksum stops the log there") {
    TempDir dir;
    TraceBuilder b;
    b.header().event(Ev::alloc(1, 0x1000, 10)).endFrame();
    b.event(Ev::alloc(2, 0x2000, 20)).endFrame();
    b.event(Ev::alloc(3, 0x3000, 30)).trailer(4);
    auto bytes = b.bytes();
    const uint64_t second = b.frameOffsets().at(1);
    bytes[second + sizeof(format::FrameHeader) + 1] ^= 0x40;
    TraceBuilder::writeFile(dir.file("t.gmtrace"), bytes);
    auto c = readAll(dir.file("t.gmtrace"));
    CHECK(c.events.size() == 1);
    CHECK(c.status.stopped_early);
    CHECK(c.status.log_end_offset == second);
    CHECK_THAT(c.status.stop_reason, Catch::Contains("checksum"));
    CHECK_FALSE(c.status.complete);
}

TEST_CASE("an absurd payload size is rejected without allocating it") {
    TempDir dir;
    TraceBuilder b;
    b.header().event(Ev::alloc(1, 0x1000, 10)).endFrame();
    b.event(Ev::alloc(2, 0x2000, 20));
    auto bytes = b.bytes();
    const uint64_t second = b.frameOffsets().at(1);
    uint32_t huge = 0xfffffff0;
    std::memcpy(&bytes[second + offsetof(format::FrameHeader, payload_size)], &huge, 4);
    TraceBuilder::writeFile(dir.file("t.gmtrace"), bytes);
    auto c = readAll(dir.file("t.gmtrace"));
    CHECK(c.events.size() == 1);
    CHECK(c.status.log_end_offset == second);
    CHECK_THAT(c.status.stop_reason, Catch::Contains("exceeds"));
}

TEST_CASE("ring recovery: committed slots past the last frame - in sequence order") {
    TempDir dir;
    TraceBuilder b;
    b.header().event(Ev::alloc(1, 0x1000, 10)).event(Ev::alloc(2, 0x2000, 20)).endFrame();
    const uint64_t p = b.position(); // 2: what the frames cover
    // Stale slots from positions the frames cover: must not come back.
    b.ringEvent(0, Ev::alloc(1, 0x1000, 10));
    b.ringEvent(1, Ev::alloc(2, 0x2000, 20));
    // Uncovered: an event, a stack spread over 3 slots, an event.
    std::vector<uint64_t> frames;
    for (int i = 0; i < 24; ++i) {
        frames.push_back(0x7f0000000000ull + uint64_t(i) * 0x123456789ull);
    }
    b.ringEvent(p + 1, Ev::free(4, 0x1000)); // out of order on purpose: sorted by position
    b.ringEvent(p, Ev::alloc(3, 0x3000, 30));
    uint32_t used = b.ringStack(p + 2, 9, frames);
    REQUIRE(used > 1);
    b.ringEvent(p + 2 + used, Ev::alloc(5, 0x5000, 50));
    // A stack whose second part never committed: skipped; the event after it still comes.
    uint32_t used2 = b.ringStack(p + 3 + used, 10, frames, 1);
    b.ringEvent(p + 3 + used + used2, Ev::alloc(6, 0x6000, 60));
    auto c = readAll(b.write(dir.file("t.gmtrace")));

    REQUIRE(c.events.size() == 6);
    CHECK(c.events[2].address == 0x3000);
    CHECK(c.events[3].op == format::Op::Free);
    CHECK(c.events[4].address == 0x5000);
    CHECK(c.events[5].address == 0x6000);
    CHECK(c.from_ring == std::vector<bool>{false, false, true, true, true, true});
    REQUIRE(c.stacks.size() == 1);
    CHECK(c.stacks[0].id == 9);
    CHECK(c.stacks[0].depth == 24);
    CHECK(c.stacks[0].frames[23] == frames[23]);
    CHECK_FALSE(c.status.complete); // no trailer: the process died
    CHECK(c.status.ring_records == 5);
}

TEST_CASE("ring slots behind a torn log are recovered too") {
    TempDir dir;
    TraceBuilder b;
    b.header().event(Ev::alloc(1, 0x1000, 10)).endFrame();
    b.event(Ev::alloc(2, 0x2000, 20)).endFrame(); // covers position 1, will be torn
    b.ringEvent(1, Ev::alloc(2, 0x2000, 20));     // the writer had not finished it
    auto bytes = b.bytes();
    bytes.resize(bytes.size() - 3);
    TraceBuilder::writeFile(dir.file("t.gmtrace"), bytes);
    auto c = readAll(dir.file("t.gmtrace"));
    REQUIRE(c.events.size() == 2);
    CHECK(c.events[1].address == 0x2000);
    CHECK(c.from_ring[1]);
}

TEST_CASE("unusable files: one error naming the file and the offset") {
    TempDir dir;
    SECTION("missing") {
        expectTraceError(dir.file("nope.gmtrace"), 0, "cannot open");
    }
    SECTION("empty") {
        TraceBuilder::writeFile(dir.file("e"), {});
        expectTraceError(dir.file("e"), 0, "empty");
    }
    SECTION("foreign") {
        std::vector<uint8_t> elf(8192, 0);
        std::memcpy(elf.data(),
                    "\x7f"
                    "ELF",
                    4);
        TraceBuilder::writeFile(dir.file("f"), elf);
        expectTraceError(dir.file("f"), 0, "bad magic");
    }
    SECTION("future version") {
        TraceBuilder b;
        b.header().formatVersion(format::kFormatVersion + 1);
        b.write(dir.file("v"));
        expectTraceError(dir.file("v"), 8, "newer");
    }
    SECTION("corrupt prologue") {
        TraceBuilder b;
        b.header();
        auto bytes = b.bytes();
        bytes[offsetof(format::Prologue, ring_slots)] ^= 1;
        TraceBuilder::writeFile(dir.file("c"), bytes);
        expectTraceError(dir.file("c"), offsetof(format::Prologue, checksum), "checksum");
    }
    SECTION("cut inside the prologue") {
        TraceBuilder b;
        auto bytes = b.bytes();
        bytes.resize(20);
        TraceBuilder::writeFile(dir.file("p"), bytes);
        expectTraceError(dir.file("p"), 20, "prologue");
    }
    SECTION("cut inside the ring") {
        TraceBuilder b;
        auto bytes = b.bytes();
        bytes.resize(format::kPrologueSize + 1000);
        TraceBuilder::writeFile(dir.file("r"), bytes);
        expectTraceError(dir.file("r"), format::kPrologueSize + 1000, "ring");
    }
}
