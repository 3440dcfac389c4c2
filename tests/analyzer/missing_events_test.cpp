// Honest when events are missing: a ring that does not join the log (a cut trace, a full
// disk) or drop mode loses events, and the report says how many and where, and marks the
// leaks and errors those events could explain as uncertain instead of inventing them.
#include "report/report_json.h"
#include "report_fixture.h"
#include "support/run_command.h"

#include <catch2/catch.hpp>

using namespace gmt;
using namespace gmt::test;
using format::Api;
using format::Kind;

namespace {

constexpr uint64_t A = 0x7f0000000000, Bx = 0x7f0000200000, C = 0x7f0000400000, D = 0x7f0000600000;

analyzer::Report reportOf(const std::vector<uint8_t>& bytes) {
    TempDir dir;
    TraceBuilder::writeFile(dir.file("t.gmtrace"), bytes);
    analyzer::ReportOptions options;
    options.symbols = false;
    return gmt::test::reportOf({dir.file("t.gmtrace")}, options);
}

const analyzer::ErrorReport* errorAt(const analyzer::Report& r, uint64_t time_ns) {
    for (const auto& e : r.errors) {
        if (e.time_ns == time_ns) {
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
    REQUIRE(r.processes.size() == 1);
    REQUIRE(r.processes[0].missing_events);
    const auto& m = *r.processes[0].missing_events;
    CHECK(m.missing_positions == 3);
    CHECK(m.gap_count == 1);
    REQUIRE(m.gaps.size() == 1);
    CHECK(m.gaps[0].first_position == 2);
    CHECK(m.gaps[0].positions == 3);
    CHECK(m.gaps[0].after_time_ns == 11);
    CHECK(m.gaps[0].before_time_ns == 15);
    CHECK(m.dropped_events == 0);
    CHECK_FALSE(m.unknown_tail);
}

TEST_CASE("frees that events lost in a gap explain are uncertain, not double or invalid") {
    auto r = reportOf(cutTrace());
    // free A after the gap: A was freed before it, but may have been allocated again in it.
    const auto* free_a = errorAt(r, 15);
    REQUIRE(free_a);
    CHECK(free_a->type == analyzer::ErrorType::DoubleFree);
    CHECK(free_a->uncertain);
    // free B: never seen allocated, but its allocation may be in the gap.
    const auto* free_b = errorAt(r, 16);
    REQUIRE(free_b);
    CHECK(free_b->type == analyzer::ErrorType::InvalidFree);
    CHECK(free_b->uncertain);
    // free C twice, both after the gap: a real double free.
    const auto* free_c = errorAt(r, 19);
    REQUIRE(free_c);
    CHECK(free_c->type == analyzer::ErrorType::DoubleFree);
    CHECK_FALSE(free_c->uncertain);
    CHECK(r.summary.errors == 3);
    CHECK(r.summary.uncertain_errors == 2);
}

TEST_CASE("leaks allocated before a gap are uncertain, those after it are not") {
    auto b = standardTrace();
    b.event(Ev::alloc(10, A, 4096)).endFrame(); // before the gap, never freed: uncertain
    b.event(Ev::alloc(11, D, 1000)).endFrame(); // lost (damaged frame)
    b.ringEvent(3, Ev::alloc(12, C, 8192, Api::cudaMalloc, Kind::Device, 2)); // after: a leak
    auto bytes = b.bytes();
    bytes[b.frameOffsets().at(1) + sizeof(format::FrameHeader) + 2] ^= 0x40;
    auto r = reportOf(bytes);
    CHECK(r.summary.leaked_bytes == 4096 + 8192);
    CHECK(r.summary.uncertain_leaked_bytes == 4096);
    bool seen_a = false, seen_c = false;
    for (const auto& l : r.leaks) {
        if (l.bytes == 4096) {
            seen_a = true;
            CHECK(l.uncertain_bytes == 4096);
            CHECK(l.uncertain_allocations == 1);
        } else if (l.bytes == 8192) {
            seen_c = true;
            CHECK(l.uncertain_bytes == 0);
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
    REQUIRE(r.processes[0].missing_events);
    const auto& m = *r.processes[0].missing_events;
    CHECK(m.dropped_events == 7);
    CHECK(m.missing_positions == 0);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].uncertain);
    CHECK(r.summary.uncertain_errors == 1);
    CHECK(r.summary.uncertain_leaked_bytes == 4096);
}

TEST_CASE("drops known only from the trailer still mark errors found before it") {
    auto b = standardTrace();
    b.event(Ev::free(11, Bx));
    b.trailer(20, 3); // the prologue says 0 (e.g. the count was updated after a copy)
    auto r = reportOf(b.bytes());
    REQUIRE(r.processes[0].missing_events);
    CHECK(r.processes[0].missing_events->dropped_events == 3);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].uncertain);
}

TEST_CASE("a damaged log with nothing after it: an unknown number of events is missing") {
    auto b = standardTrace();
    b.event(Ev::alloc(10, A, 4096)).endFrame();
    b.event(Ev::free(11, A)).trailer(20);
    auto bytes = b.bytes();
    bytes[b.frameOffsets().at(1) + sizeof(format::FrameHeader) + 2] ^= 0x40;
    auto r = reportOf(bytes);
    REQUIRE(r.processes[0].missing_events);
    CHECK(r.processes[0].missing_events->unknown_tail);
    CHECK(r.summary.uncertain_leaked_bytes == 4096);
}

TEST_CASE("a complete trace and a ring that joins the log: nothing is missing") {
    auto b = standardTrace();
    b.event(Ev::alloc(10, A, 4096)).event(Ev::free(11, A)).endFrame();
    b.ringEvent(2, Ev::alloc(12, C, 100)); // the writer had not drained it: joins at 2
    b.ringEvent(3, Ev::free(13, C));
    b.ringEvent(4, Ev::free(14, C)); // a real double free
    auto r = reportOf(b.bytes());
    CHECK_FALSE(r.processes[0].missing_events);
    REQUIRE(r.errors.size() == 1);
    CHECK_FALSE(r.errors[0].uncertain);
    CHECK(r.summary.uncertain_errors == 0);
}

TEST_CASE("a multi-slot record whose piece never committed loses the record, not events") {
    auto b = standardTrace();
    b.event(Ev::alloc(10, A, 4096)).endFrame();
    std::vector<uint64_t> frames(30, 0x401000);
    const uint32_t used = b.ringStack(1, 9, frames, 1); // piece 1 of the stack never committed
    b.ringEvent(1 + used, Ev::free(12, A));
    auto r = reportOf(b.bytes());
    CHECK_FALSE(r.processes[0].missing_events);
    CHECK(r.errors.empty());
}

// The views, as a person and a program meet them: the JSON (schema-valid, read back as
// it was written), the text report through a pipe, and `check`'s verdict and status.

namespace {

// Through a pipe, with no terminal anywhere to take a width from: lines are not wrapped.
std::string cli(const std::string& args) {
    return "env -u COLUMNS " + std::string(GMT_CLI) + " " + args + " </dev/null";
}

// Drop mode, 7 events lost: a leak and a free of something never seen allocated.
std::vector<uint8_t> dropTrace() {
    auto b = standardTrace();
    b.droppedInPrologue(7);
    b.event(Ev::alloc(10, A, 4096));
    b.event(Ev::free(11, Bx));
    b.trailer(20, 7);
    return b.bytes();
}

} // namespace

TEST_CASE("missing events in JSON: schema-valid, and read back as they were written") {
    for (const auto& bytes : {cutTrace(), dropTrace()}) {
        const analyzer::Json j = analyzer::toJson(reportOf(bytes));
        INFO(j.dump(2));
        CHECK(reportSchema().validate(j).empty());
        CHECK(j["processes"][0].contains("missing_events"));
        CHECK(analyzer::toJson(analyzer::fromJson(j)) == j);
    }
    const analyzer::Json j = analyzer::toJson(reportOf(cutTrace()));
    CHECK(j["processes"][0]["missing_events"]["gaps"][0]["first_position"] == 2);
    CHECK(j["summary"]["uncertain_errors"] == 2);
    // A field of the wrong type inside it is an input error naming the field.
    auto broken = j;
    broken["processes"][0]["missing_events"]["gaps"][0]["positions"] = "three";
    CHECK_THROWS_WITH(analyzer::fromJson(broken),
                      "processes[0].missing_events.gaps[0].positions: expected an unsigned "
                      "integer");
}

TEST_CASE("the text report says how many events are missing, where, and what is uncertain") {
    TempDir dir;
    TraceBuilder::writeFile(dir.file("cut.gmtrace"), cutTrace());
    auto r = runCommand(cli("report --no-symbols " + dir.file("cut.gmtrace")));
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK_THAT(r.out, Catch::Contains("MISSING EVENTS: 3 sequence positions in 1 gap; leaks "
                                      "and errors they could explain are marked uncertain"));
    CHECK_THAT(r.out, Catch::Contains("lost: positions 2-4, after "));
    CHECK_THAT(r.out, Catch::Contains("(uncertain) double_free: cudaFree(0x7f0000000000)"));
    CHECK_THAT(r.out, Catch::Contains("(uncertain) invalid_free: cudaFree(0x7f0000200000)"));
    // The double free made entirely after the gap is stated as fact.
    CHECK_THAT(r.out, Catch::Contains("\n  double_free: cudaFree(0x7f0000400000)"));
    CHECK_THAT(r.out, Catch::Contains("2 errors uncertain"));

    TraceBuilder::writeFile(dir.file("drop.gmtrace"), dropTrace());
    r = runCommand(cli("report --no-symbols " + dir.file("drop.gmtrace")));
    INFO(r.out << r.err);
    CHECK_THAT(r.out, Catch::Contains("MISSING EVENTS: 7 events dropped at unknown points"));
    CHECK_THAT(r.out, Catch::Contains("(4.00 KiB uncertain: events are missing)"));
    CHECK_THAT(r.out, Catch::Contains("(4.00 KiB uncertain: allocated before events went "
                                      "missing)"));
}

TEST_CASE("check fails a trace with missing events and counts only what they cannot explain") {
    TempDir dir;
    const std::string cut = dir.file("cut.gmtrace"), drop = dir.file("drop.gmtrace");
    TraceBuilder::writeFile(cut, cutTrace());
    TraceBuilder::writeFile(drop, dropTrace());

    auto r = runCommand(cli("check --no-symbols " + cut));
    INFO(r.out << r.err);
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::Contains("FAIL trace: incomplete (frame checksum mismatch); events "
                                      "missing (3 sequence positions in 1 gap)"));
    CHECK_THAT(r.out, Catch::Contains("first gap: positions 2-4, after "));
    // One real double free fails the errors check; the two the gap explains do not count.
    CHECK_THAT(r.out, Catch::Contains("FAIL errors: 1 error"));
    CHECK_THAT(r.out, Catch::Contains("2 uncertain (missing events could explain them), not "
                                      "counted"));

    // Allowed, the trace check passes; the certain double free still fails the run.
    r = runCommand(cli("check --no-symbols --allow-incomplete " + cut));
    INFO(r.out << r.err);
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::Contains("(allowed: --allow-incomplete)"));
    CHECK_THAT(r.out, Catch::Contains("FAIL errors: 1 error"));

    // Drop mode: every leak and error is uncertain. The run fails for the drops, not for
    // a leak or an invalid free that the dropped events could explain.
    r = runCommand(cli("check --no-symbols " + drop));
    INFO(r.out << r.err);
    CHECK(r.status == 1);
    CHECK_THAT(r.out, Catch::Contains("FAIL trace: events missing (7 events dropped at unknown "
                                      "points)"));
    CHECK_THAT(r.out, Catch::Contains("ok   leaks:"));
    CHECK_THAT(r.out, Catch::Contains("4.0 KiB uncertain (allocated before events went "
                                      "missing), not counted"));
    CHECK_THAT(r.out, Catch::Contains("ok   errors:"));
    r = runCommand(cli("check --no-symbols --allow-incomplete " + drop));
    INFO(r.out << r.err);
    CHECK(r.status == 0);
}
