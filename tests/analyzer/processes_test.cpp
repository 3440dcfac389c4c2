// Several processes in one report: a process's memory ends when the process does, so the
// combined peak is what was live at one moment, whether the processes overlapped in time
// (a server and its workers) or ran one after another (a test suite, one process each).
#include "report_fixture.h"

#include <catch2/catch.hpp>

using namespace gmt;
using namespace gmt::test;
using format::Api;
using format::Kind;

namespace {

constexpr uint64_t B = 0x7f0000000000;

// The README tour's program: 4 steps of a 64 MiB workspace (freed) and a 16 MiB buffer
// kept (leaked): peak 112 MiB, 64 MiB leaked. Events from `t0`, trailer at `end`.
TraceBuilder tourProcess(uint32_t pid, uint64_t t0, uint64_t end) {
    auto h = TraceBuilder::defaultHeader();
    h.pid = pid;
    h.start_mono_ns = t0;
    TraceBuilder b;
    b.header(h).device().stack(1, {0x401000}).stack(2, {0x402000});
    uint64_t t = t0;
    for (uint64_t step = 0; step < 4; ++step) {
        const uint64_t workspace = B + 0x10000000 + step * 0x100000000;
        b.event(Ev::alloc(++t, workspace, 64 * MiB, Api::cudaMalloc, Kind::Device, 2));
        b.event(Ev::free(++t, workspace));
        b.event(Ev::alloc(++t, B + step * 0x2000000, 16 * MiB, Api::cudaMalloc, Kind::Device, 1));
    }
    return b.trailer(end);
}

// 152 MiB at its peak: 100 MiB, then 52 MiB on top, then both freed (or kept: leaked).
TraceBuilder peakyProcess(uint32_t pid, uint64_t t0, uint64_t end, bool free_all = true) {
    auto h = TraceBuilder::defaultHeader();
    h.pid = pid;
    h.start_mono_ns = t0;
    TraceBuilder b;
    b.header(h).device().stack(1, {0x501000});
    b.event(Ev::alloc(t0 + 1, B, 100 * MiB, Api::cudaMalloc, Kind::Device, 1));
    b.event(Ev::alloc(t0 + 2, B + 0x10000000, 52 * MiB, Api::cudaMalloc, Kind::Device, 1));
    if (free_all) {
        b.event(Ev::free(t0 + 3, B));
        b.event(Ev::free(t0 + 4, B + 0x10000000));
    }
    return b.trailer(end);
}

analyzer::Report twoProcesses(TraceBuilder a, TraceBuilder b) {
    TempDir dir;
    analyzer::ReportOptions o;
    o.symbols = false;
    return reportOf({a.write(dir.file("a.gmtrace")), b.write(dir.file("b.gmtrace"))}, o);
}

} // namespace

TEST_CASE("processes one after another: the combined peak is the larger one") {
    // The first ends (trailer at 1000) before the second starts (2000); its 64 MiB leak
    // ends with it.
    auto r = twoProcesses(tourProcess(100, 10, 1000), peakyProcess(200, 2000, 3000));
    REQUIRE(r.processes.size() == 2);
    CHECK(r.summary.peak_bytes == 152 * MiB);
    CHECK(r.summary.peak_time_ns == 2002);
    CHECK(r.devices[0].peak_bytes == 152 * MiB);
    // Leaks are still each process's own.
    CHECK(r.summary.leaked_bytes == 64 * MiB);
    CHECK(r.processes[0].leaked_bytes == 64 * MiB);
    CHECK(r.processes[1].leaked_bytes == 0);
    REQUIRE(r.leaks.size() == 1);
    CHECK(r.leaks[0].pid == 100);
    CHECK(r.processes[0].end_mono_ns == 1000);
    // The peak's sites are the second process's only.
    REQUIRE(r.peak.top_sites.size() == 1);
    CHECK(r.peak.top_sites[0].pid == 200);
    CHECK(r.peak.top_sites[0].bytes == 152 * MiB);
    // The timeline drops to 0 when the first process ends.
    bool dropped = false;
    for (const auto& [time, bytes] : r.timeline[0].points) {
        dropped = dropped || (time == 1000 && bytes == 0);
    }
    CHECK(dropped);
}

TEST_CASE("the same processes in the other order give the same peak") {
    auto r = twoProcesses(peakyProcess(200, 10, 500), tourProcess(100, 1000, 2000));
    CHECK(r.summary.peak_bytes == 152 * MiB);
    CHECK(r.summary.leaked_bytes == 64 * MiB);
}

TEST_CASE("overlapping processes: live memory of both counts together") {
    // The tour process keeps its 64 MiB while the other one runs (1000..1004).
    auto r = twoProcesses(tourProcess(100, 10, 5000), peakyProcess(200, 1000, 3000));
    CHECK(r.summary.peak_bytes == 64 * MiB + 152 * MiB);
    CHECK(r.summary.peak_time_ns == 1002);
    CHECK(r.peak.top_sites.size() == 2);
    CHECK(r.summary.leaked_bytes == 64 * MiB);
}

TEST_CASE("a process that died ends at its last event") {
    // No trailer: the first process was killed; its last event is at t=12.
    auto a = TraceBuilder();
    auto h = TraceBuilder::defaultHeader();
    h.pid = 100;
    a.header(h).device().stack(1, {0x401000});
    a.event(Ev::alloc(12, B, 100 * MiB));
    auto r = twoProcesses(a, peakyProcess(200, 20, 30));
    CHECK(r.processes[0].complete == false);
    CHECK(r.processes[0].end_mono_ns == 12);
    CHECK(r.summary.peak_bytes == 152 * MiB);
    CHECK(r.summary.leaked_bytes == 100 * MiB);
}

TEST_CASE("a process ending when another allocates is ended first") {
    // The first keeps 152 MiB to its end at t=100; the second allocates at t=100.
    auto r = twoProcesses(peakyProcess(200, 10, 100, false), tourProcess(100, 99, 1000));
    CHECK(r.summary.peak_bytes == 152 * MiB);
    CHECK(r.summary.leaked_bytes == 152 * MiB + 64 * MiB);
}
