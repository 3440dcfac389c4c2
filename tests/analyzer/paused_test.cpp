// Recording paused and resumed (Recording records; docs/live.md): what was made while
// paused is unseen, so its free is no error but counted; the report says when and how long.
// And a 56-byte prologue (before the control word) still reads, its control as 0.
#include "report_fixture.h"

#include "read/trace_reader.h"
#include "report/report_json.h"

#include <catch2/catch.hpp>

using namespace gmt;
using namespace gmt::test;
using format::Api;
using format::Kind;
using format::RecordingCause;
using format::RecordingChange;

namespace {
constexpr uint64_t B = 0x7f0000000000;
} // namespace

TEST_CASE("a free of memory allocated while paused is no error, and is counted") {
    auto b = standardTrace();
    b.recording(1, RecordingChange::Pause, RecordingCause::Start);
    b.recording(11, RecordingChange::Resume);
    b.event(Ev::alloc(12, B, 100, Api::cudaMalloc, Kind::Device, 1));
    b.event(Ev::free(13, B + 0x1000, Api::cudaFree)); // allocated before recording began
    b.event(Ev::free(14, B, Api::cudaFree));
    b.recording(20, RecordingChange::Pause);
    b.recording(30, RecordingChange::Resume);
    b.event(Ev::free(31, B, Api::cudaFree)); // reallocated and freed again while paused
    auto r = report(b);
    CHECK(r.errors.empty());
    CHECK(r.summary.errors == 0);
    REQUIRE(r.processes[0].paused);
    const analyzer::PausedReport& p = *r.processes[0].paused;
    CHECK(p.started_paused);
    CHECK_FALSE(p.paused_at_end);
    CHECK(p.frees == 2);
    CHECK(p.paused_ns == 10 + 10);
    REQUIRE(p.changes.size() == 4);
    CHECK(p.changes[0].change == "pause");
    CHECK(p.changes[0].cause == "start");
    CHECK(p.changes[3].change == "resume");
    CHECK(reportSchema().validate(analyzer::toJson(r)).empty());
}

TEST_CASE("without a pause the same frees are errors") {
    auto b = standardTrace();
    b.event(Ev::free(13, B + 0x1000, Api::cudaFree));
    auto r = report(b);
    CHECK(r.summary.errors == 1);
    CHECK_FALSE(r.processes[0].paused);
}

TEST_CASE("a leak made before a pause is uncertain; one made after is not") {
    auto b = standardTrace();
    b.event(Ev::alloc(1, B, 100, Api::cudaMalloc, Kind::Device, 1));
    b.recording(2, RecordingChange::Pause);
    b.recording(3, RecordingChange::Resume);
    b.event(Ev::alloc(4, B + 0x100000, 200, Api::cudaMalloc, Kind::Device, 2));
    auto r = report(b);
    CHECK(r.summary.leaked_bytes == 300);
    CHECK(r.summary.uncertain_leaked_bytes == 100);
    CHECK(r.processes[0].paused->paused_ns == 1);
}

TEST_CASE("a prologue of 56 bytes (before the control word) reads, its control as 0") {
    auto b = standardTrace();
    std::vector<uint8_t> bytes = b.bytes();
    format::Prologue p{};
    std::memcpy(&p, bytes.data(), sizeof p);
    p.prologue_size = 56;
    p.control = 0x5a5a5a5a; // whatever an old file had there is not a control word
    p.checksum = format::prologueChecksum(p);
    std::memcpy(bytes.data(), &p, sizeof p);
    TempDir dir;
    const std::string path = dir.file("old.gmtrace");
    TraceBuilder::writeFile(path, bytes);
    analyzer::TraceReader reader(path);
    CHECK(reader.prologue().control == format::kControlRecording);
    analyzer::ReportOptions options;
    options.symbols = false;
    auto r = reportOf({path}, options);
    CHECK_FALSE(r.processes[0].paused);
}
