// Honest when events are missing: a ring that does not join the log (a cut trace, a full
// disk) or drop mode loses events, and the report says how many and where, and marks the
// leaks and errors those events could explain as uncertain instead of inventing them.
#include "report_fixture.h"

#include <catch2/catch.hpp>

using namespace gmt;
using namespace gmt::test;
using format::Api;
using format::Kind;

namespace {

constexpr uint64_t A = 0x7f0000000000, Bx = 0x7f0000200000, C = 0x7f0000400000, D = 0x7f0000600000;

analyzer::Json reportOf(const std::vector<uint8_t>& bytes) {
    TempDir dir;
    TraceBuilder::writeFile(dir.file("t.gmtrace"), bytes);
    analyzer::ReportOptions options;
    options.symbols = false;
    return analyzer::buildReport({dir.file("t.gmtrace")}, options);
}

const analyzer::Json* errorAt(const analyzer::Json& r, uint64_t time_ns) {
    for (const auto& e : r["errors"]) {
        if (e["time_ns"] == time_ns) {
            return &e;
        }
    }
    return nullptr;
}

// Frames cover positions 0..1 (alloc A, free A); the next frame (positions 2..4: alloc A
// again, alloc B, alloc D) is damaged, and the ring, which has moved on, still holds
// positions 5.. only: free A, free B, then alloc C, free C, free C, and D stays live.
std::vector<uint8_t> cutTrace() {
    auto b = standardTrace();
    b.event(Ev::alloc(10, A, 4096)).event(Ev::free(11, A)).endFrame();
    b.event(Ev::alloc(12, A, 4096)).event(Ev::alloc(13, Bx, 4096)).event(Ev::alloc(14, D, 4096));
    b.endFrame();
    b.ringEvent(5, Ev::free(15, A));
    b.ringEvent(6, Ev::free(16, Bx));
    b.ringEvent(7, Ev::alloc(17, C, 8192));
    b.ringEvent(8, Ev::free(18, C));
    b.ringEvent(9, Ev::free(19, C));
    auto bytes = b.bytes();
    bytes[b.frameOffsets().at(1) + sizeof(format::FrameHeader) + 2] ^= 0x40; // bad checksum
    return bytes;
}

} // namespace

TEST_CASE("a ring that does not join the log: the gap is reported, not hidden") {
    auto r = reportOf(cutTrace());
    const auto& p = r["processes"][0];
    REQUIRE(p.contains("missing_events"));
    const auto& m = p["missing_events"];
    CHECK(m["missing_positions"] == 3);
    CHECK(m["gap_count"] == 1);
    REQUIRE(m["gaps"].size() == 1);
    CHECK(m["gaps"][0]["first_position"] == 2);
    CHECK(m["gaps"][0]["positions"] == 3);
    CHECK(m["gaps"][0]["after_time_ns"] == 11);
    CHECK(m["gaps"][0]["before_time_ns"] == 15);
    CHECK(m["dropped_events"] == 0);
    CHECK(m["unknown_tail"] == false);
}

TEST_CASE("frees that events lost in a gap explain are uncertain, not double or invalid") {
    auto r = reportOf(cutTrace());
    // free A after the gap: A was freed before it, but may have been allocated again in it.
    const auto* free_a = errorAt(r, 15);
    REQUIRE(free_a);
    CHECK((*free_a)["type"] == "double_free");
    CHECK((*free_a)["uncertain"] == true);
    // free B: never seen allocated, but its allocation may be in the gap.
    const auto* free_b = errorAt(r, 16);
    REQUIRE(free_b);
    CHECK((*free_b)["type"] == "invalid_free");
    CHECK((*free_b)["uncertain"] == true);
    // free C twice, both after the gap: a real double free.
    const auto* free_c = errorAt(r, 19);
    REQUIRE(free_c);
    CHECK((*free_c)["type"] == "double_free");
    CHECK((*free_c)["uncertain"] == false);
    CHECK(r["summary"]["errors"] == 3);
    CHECK(r["summary"]["uncertain_errors"] == 2);
}

TEST_CASE("leaks allocated before a gap are uncertain, those after it are not") {
    auto b = standardTrace();
    b.event(Ev::alloc(10, A, 4096)).endFrame(); // before the gap, never freed: uncertain
    b.event(Ev::alloc(11, D, 1000)).endFrame(); // lost (damaged frame)
    b.ringEvent(3, Ev::alloc(12, C, 8192, Api::cudaMalloc, Kind::Device, 2)); // after: a leak
    auto bytes = b.bytes();
    bytes[b.frameOffsets().at(1) + sizeof(format::FrameHeader) + 2] ^= 0x40;
    auto r = reportOf(bytes);
    CHECK(r["summary"]["leaked_bytes"] == 4096 + 8192);
    CHECK(r["summary"]["uncertain_leaked_bytes"] == 4096);
    bool seen_a = false, seen_c = false;
    for (const auto& l : r["leaks"]) {
        if (l["bytes"] == 4096) {
            seen_a = true;
            CHECK(l["uncertain_bytes"] == 4096);
            CHECK(l["uncertain_allocations"] == 1);
        } else if (l["bytes"] == 8192) {
            seen_c = true;
            CHECK(l["uncertain_bytes"] == 0);
        }
    }
    CHECK(seen_a);
    CHECK(seen_c);
}

TEST_CASE("drop mode: every leak and error is uncertain, and the count is reported") {
    auto b = standardTrace();
    b.droppedInPrologue(7);
    b.event(Ev::alloc(10, A, 4096));
    b.event(Ev::free(11, Bx)); // its allocation may have been dropped
    b.trailer(20, 7);
    auto r = reportOf(b.bytes());
    const auto& m = r["processes"][0]["missing_events"];
    CHECK(m["dropped_events"] == 7);
    CHECK(m["missing_positions"] == 0);
    REQUIRE(r["errors"].size() == 1);
    CHECK(r["errors"][0]["uncertain"] == true);
    CHECK(r["summary"]["uncertain_errors"] == 1);
    CHECK(r["summary"]["uncertain_leaked_bytes"] == 4096);
}

TEST_CASE("drops known only from the trailer still mark errors found before it") {
    auto b = standardTrace();
    b.event(Ev::free(11, Bx));
    b.trailer(20, 3); // the prologue says 0 (e.g. the count was updated after a copy)
    auto r = reportOf(b.bytes());
    CHECK(r["processes"][0]["missing_events"]["dropped_events"] == 3);
    REQUIRE(r["errors"].size() == 1);
    CHECK(r["errors"][0]["uncertain"] == true);
}

TEST_CASE("a damaged log with nothing after it: an unknown number of events is missing") {
    auto b = standardTrace();
    b.event(Ev::alloc(10, A, 4096)).endFrame();
    b.event(Ev::free(11, A)).trailer(20);
    auto bytes = b.bytes();
    bytes[b.frameOffsets().at(1) + sizeof(format::FrameHeader) + 2] ^= 0x40;
    auto r = reportOf(bytes);
    const auto& m = r["processes"][0]["missing_events"];
    CHECK(m["unknown_tail"] == true);
    CHECK(r["summary"]["uncertain_leaked_bytes"] == 4096);
}

TEST_CASE("a complete trace and a ring that joins the log: nothing is missing") {
    auto b = standardTrace();
    b.event(Ev::alloc(10, A, 4096)).event(Ev::free(11, A)).endFrame();
    b.ringEvent(2, Ev::alloc(12, C, 100)); // the writer had not drained it: joins at 2
    b.ringEvent(3, Ev::free(13, C));
    b.ringEvent(4, Ev::free(14, C)); // a real double free
    auto r = reportOf(b.bytes());
    CHECK_FALSE(r["processes"][0].contains("missing_events"));
    REQUIRE(r["errors"].size() == 1);
    CHECK(r["errors"][0]["uncertain"] == false);
    CHECK(r["summary"]["uncertain_errors"] == 0);
}

TEST_CASE("a multi-slot record whose piece never committed loses the record, not events") {
    auto b = standardTrace();
    b.event(Ev::alloc(10, A, 4096)).endFrame();
    std::vector<uint64_t> frames(30, 0x401000);
    const uint32_t used = b.ringStack(1, 9, frames, 1); // piece 1 of the stack never committed
    b.ringEvent(1 + used, Ev::free(12, A));
    auto r = reportOf(b.bytes());
    CHECK_FALSE(r["processes"][0].contains("missing_events"));
    CHECK(r["errors"].empty());
}
