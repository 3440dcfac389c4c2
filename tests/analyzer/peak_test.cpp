// Peak: device-resident bytes overall, per device, per kind, and the stacks that held
// the memory at that moment (not before, not after).
#include "report_fixture.h"

#include <catch2/catch.hpp>

using namespace gmt;
using namespace gmt::test;
using format::Api;
using format::Kind;

namespace {
format::Event onThread(format::Event e, uint32_t tid) {
    e.tid = tid;
    return e;
}
} // namespace

TEST_CASE("peak over interleaved threads and devices - with the sites that held it") {
    auto b = standardTrace(2);
    // Two threads on two devices; the overall peak (t=5) is not either device's peak.
    b.event(
        onThread(Ev::alloc(1, 0x7f0000000000, 100 * MiB, Api::cudaMalloc, Kind::Device, 1, 0), 1));
    b.event(
        onThread(Ev::alloc(2, 0x7f1000000000, 10 * MiB, Api::cudaMalloc, Kind::Device, 2, 1), 2));
    b.event(
        onThread(Ev::alloc(3, 0x7f1000a00000, 30 * MiB, Api::cudaMalloc, Kind::Device, 2, 1), 2));
    b.event(onThread(Ev::alloc(4, 0x10000, 500 * MiB, Api::cudaMallocHost, Kind::HostPinned, 3, -1),
                     1));
    b.event(onThread(
        Ev::alloc(5, 0x7f0006400000, 20 * MiB, Api::cudaMallocManaged, Kind::Managed, 3, 0), 1));
    b.event(onThread(Ev::free(6, 0x7f0000000000), 1)); // device 0: 120 -> 20
    b.event(
        onThread(Ev::alloc(7, 0x7f1002800000, 50 * MiB, Api::cudaMalloc, Kind::Device, 2, 1), 2));
    b.event(onThread(Ev::free(8, 0x7f1000000000, Api::cudaFree, Kind::Device, 2, 1), 2));
    b.event(onThread(Ev::free(9, 0x7f1000a00000, Api::cudaFree, Kind::Device, 2, 1), 2));
    b.trailer(10);
    auto r = report(b);

    // Live device bytes: t5 = 100+10+30+20 = 160 MiB (host pinned excluded); t7 = 110 MiB.
    CHECK(r.summary.peak_bytes == 160 * MiB);
    CHECK(r.summary.peak_time_ns == 5);
    CHECK(r.peak.bytes == 160 * MiB);
    REQUIRE(r.devices.size() == 2);
    CHECK(r.devices[0].peak_bytes == 120 * MiB);
    CHECK(r.devices[0].peak_time_ns == 5);
    CHECK(r.devices[1].peak_bytes == 90 * MiB);
    CHECK(r.devices[1].peak_time_ns == 7);
    CHECK(kindOf(r, Kind::HostPinned).peak_bytes == 500 * MiB);
    CHECK(kindOf(r, Kind::Managed).peak_bytes == 20 * MiB);
    CHECK(kindOf(r, Kind::Device).peak_bytes == 140 * MiB);
    // The largest single allocation per kind, whenever it was made: device 100 MiB at t=1,
    // not the 50 MiB live at device 1's peak.
    CHECK(kindOf(r, Kind::Device).largest_allocation_bytes == 100 * MiB);
    CHECK(kindOf(r, Kind::HostPinned).largest_allocation_bytes == 500 * MiB);
    CHECK(kindOf(r, Kind::Managed).largest_allocation_bytes == 20 * MiB);
    CHECK(kindOf(r, Kind::Pool).largest_allocation_bytes == 0);

    // Sites at t=5: stack 1 100 MiB (1), stack 2 40 MiB (2), stack 3 20 MiB (managed).
    auto sites = r.peak.top_sites;
    REQUIRE(sites.size() == 3);
    CHECK(sites[0].stack_id == 1);
    CHECK(sites[0].bytes == 100 * MiB);
    CHECK(sites[1].stack_id == 2);
    CHECK(sites[1].bytes == 40 * MiB);
    CHECK(sites[1].allocations == 2);
    CHECK(sites[2].bytes == 20 * MiB);
}

TEST_CASE("a later - lower local maximum does not overwrite the peak's sites") {
    auto b = standardTrace();
    b.event(Ev::alloc(1, 0x7f0000000000, 10 * MiB, Api::cudaMalloc, Kind::Device, 1));
    b.event(Ev::free(2, 0x7f0000000000));
    b.event(Ev::alloc(3, 0x7f0000000000, 8 * MiB, Api::cudaMalloc, Kind::Device, 2));
    b.event(Ev::free(4, 0x7f0000000000));
    auto r = report(b);
    CHECK(r.peak.bytes == 10 * MiB);
    REQUIRE(r.peak.top_sites.size() == 1);
    CHECK(r.peak.top_sites[0].stack_id == 1);
}

TEST_CASE("a peak that is never followed by a free is still captured") {
    auto b = standardTrace();
    b.event(Ev::alloc(1, 0x7f0000000000, 1 * MiB, Api::cudaMalloc, Kind::Device, 1));
    b.event(Ev::alloc(2, 0x7f0000200000, 2 * MiB, Api::cudaMalloc, Kind::Device, 2));
    auto r = report(b);
    CHECK(r.peak.bytes == 3 * MiB);
    CHECK(r.peak.time_ns == 2);
    CHECK(r.peak.top_sites.size() == 2);
}

TEST_CASE("pitched allocations count the bytes asked for") {
    auto b = standardTrace();
    auto e = Ev::alloc(1, 0x7f0000000000, 1000 * 100, Api::cudaMallocPitch);
    e.actual_size = 1024 * 100;
    e.offset = 1024;
    b.event(e);
    auto r = report(b);
    CHECK(r.summary.peak_bytes == 100000);
}

TEST_CASE("the largest allocation of a VMM handle is the handle's size") {
    auto b = fragmentationExample(); // 2 MiB handles; device allocations up to 3 MiB
    b.trailer(10);
    auto r = report(b);
    CHECK(kindOf(r, Kind::Vmm).largest_allocation_bytes == 2 * MiB);
    CHECK(kindOf(r, Kind::Device).largest_allocation_bytes == 3 * MiB);
}
