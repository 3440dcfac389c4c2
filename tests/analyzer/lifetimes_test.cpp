// Lifetimes with CUDA semantics, seen through the report: leaks and their grouping,
// pools, the three VMM layers, teardown, address reuse.
#include "report_fixture.h"

#include <catch2/catch.hpp>

using namespace gmt;
using namespace gmt::test;
using format::Api;
using format::Kind;
using format::Op;

TEST_CASE("leaks are grouped by stack - kind and api - largest group first") {
    auto b = standardTrace();
    b.event(Ev::alloc(10, 0x7f0000000000, 100, Api::cudaMalloc, Kind::Device, 1));
    b.event(Ev::alloc(11, 0x7f0000001000, 200, Api::cudaMalloc, Kind::Device, 1));
    b.event(Ev::alloc(12, 0x7f0000002000, 300, Api::cudaMalloc, Kind::Device, 1));
    b.event(Ev::alloc(13, 0x7f0000200000, 1000, Api::cudaMalloc, Kind::Device, 2));
    b.event(Ev::alloc(14, 0x7f0000400000, 5000, Api::cudaMalloc, Kind::Device, 3));
    b.event(Ev::free(15, 0x7f0000400000));
    b.event(Ev::alloc(16, 0x10000, 64, Api::cudaMallocHost, Kind::HostPinned, 3, -1));
    b.trailer(20);
    auto r = report(b);

    CHECK(r.summary.leaked_bytes == 1664);
    CHECK(r.summary.leaked_allocations == 5);
    CHECK(r.summary.allocations == 6);
    CHECK(r.summary.frees == 1);
    REQUIRE(r.leaks.size() == 3);
    CHECK(r.leaks[0].bytes == 1000);
    CHECK(r.leaks[0].allocations == 1);
    CHECK(r.leaks[0].stack_id == 2);
    CHECK(r.leaks[1].bytes == 600);
    CHECK(r.leaks[1].allocations == 3);
    CHECK(r.leaks[1].api == "cudaMalloc");
    CHECK(r.leaks[1].kind == Kind::Device);
    CHECK(r.leaks[1].stack.size() == 2);
    CHECK(r.leaks[1].stack[0].address == 0x401000u);
    CHECK(r.leaks[2].kind == Kind::HostPinned);
    CHECK(kindOf(r, Kind::HostPinned).leaked_bytes == 64);
    CHECK(kindOf(r, Kind::Device).leaked_bytes == 1600);
    CHECK(kindOf(r, Kind::Device).allocations == 5);
    CHECK(r.devices[0].leaked_bytes == 1600);
    CHECK(r.processes[0].complete == true);
    CHECK(r.processes[0].pid == 4242);
}

TEST_CASE("the --top option limits the groups listed - not the totals") {
    auto b = standardTrace();
    for (uint32_t s = 1; s <= 3; ++s) {
        b.event(
            Ev::alloc(s, 0x7f0000000000 + s * 0x1000, s * 10, Api::cudaMalloc, Kind::Device, s));
    }
    analyzer::ReportOptions o;
    o.top = 2;
    auto r = report(b, o);
    CHECK(r.leaks.size() == 2);
    CHECK(r.summary.leaked_bytes == 60);
    CHECK(r.summary.leak_groups == 3);
}

TEST_CASE("an address reused after a free is a new allocation") {
    auto b = standardTrace();
    b.event(Ev::alloc(1, 0x7f0000000000, 100));
    b.event(Ev::free(2, 0x7f0000000000));
    b.event(Ev::alloc(3, 0x7f0000000000, 300, Api::cudaMalloc, Kind::Device, 3));
    b.event(Ev::free(4, 0x7f0000000000));
    b.event(Ev::alloc(5, 0x7f0000000000, 50, Api::cudaMalloc, Kind::Device, 2));
    b.trailer(6);
    auto r = report(b);
    CHECK(r.errors.empty());
    CHECK(r.summary.allocations == 3);
    CHECK(r.summary.frees == 2);
    CHECK(r.summary.leaked_bytes == 50);
    CHECK(r.leaks[0].stack_id == 2);
    CHECK(r.summary.peak_bytes == 300);
}

TEST_CASE("pool allocations live from request to free request; teardown leaves them") {
    auto b = standardTrace();
    auto a1 = Ev::alloc(1, 0x7f0000000000, 1000, Api::cudaMallocAsync, Kind::Pool);
    a1.handle = 0xbeef;
    auto a2 = Ev::alloc(2, 0x7f0000001000, 2000, Api::cuMemAllocFromPoolAsync, Kind::Pool, 2);
    b.event(a1).event(a2);
    b.event(Ev::free(3, 0x7f0000000000, Api::cudaFreeAsync, Kind::Pool));
    auto reset = Ev::op(4, Op::Teardown, Api::cudaDeviceReset, 0, 0);
    reset.kind = Kind::None;
    b.event(reset);
    b.event(Ev::op(5, Op::PoolDestroy, Api::cudaMemPoolDestroy, 0, 0, 0xbeef));
    b.trailer(6);
    auto r = report(b);
    CHECK(kindOf(r, Kind::Pool).allocations == 2);
    CHECK(kindOf(r, Kind::Pool).peak_bytes == 3000);
    CHECK(kindOf(r, Kind::Pool).leaked_bytes == 2000);
    REQUIRE(r.leaks.size() == 1);
    CHECK(r.leaks[0].released_by_teardown == false);
    CHECK(r.leaks[0].api == "cuMemAllocFromPoolAsync");
    CHECK(r.errors.empty());
}

TEST_CASE("VMM: reservations hold no bytes; handles hold bytes until released and unmapped") {
    auto b = standardTrace();
    const uint64_t va = 0x7f1000000000;
    b.event(Ev::op(1, Op::VmmReserve, Api::cuMemAddressReserve, va, 64 * MiB));
    b.event(Ev::op(2, Op::VmmCreate, Api::cuMemCreate, 0, 4 * MiB, 0xa1));
    b.event(Ev::op(3, Op::VmmCreate, Api::cuMemCreate, 0, 2 * MiB, 0xa2, 2));
    auto host = Ev::op(4, Op::VmmCreate, Api::cuMemCreate, 0, 8 * MiB, 0xa3, 3, -1);
    host.flags = format::kFlagHostLocated;
    b.event(host);
    b.event(Ev::op(5, Op::VmmMap, Api::cuMemMap, va, 4 * MiB, 0xa1));
    b.event(Ev::op(6, Op::VmmMap, Api::cuMemMap, va + 4 * MiB, 2 * MiB, 0xa2));
    b.event(Ev::op(7, Op::VmmRelease, Api::cuMemRelease, 0, 0, 0xa1)); // still mapped
    b.event(Ev::op(8, Op::VmmUnmap, Api::cuMemUnmap, va, 4 * MiB));    // now gone
    b.event(Ev::op(9, Op::VmmRelease, Api::cuMemRelease, 0, 0, 0xa3));
    b.event(Ev::op(10, Op::VmmAddressFree, Api::cuMemAddressFree, va, 64 * MiB));
    b.trailer(11);
    auto r = report(b);

    // Device-resident: handles a1 and a2 (6 MiB); the host-located one never counts.
    CHECK(r.summary.peak_bytes == 6 * MiB);
    CHECK(kindOf(r, Kind::Vmm).peak_bytes == 6 * MiB);
    CHECK(kindOf(r, Kind::Vmm).allocations == 3);
    // a2 is never released (still mapped in a freed reservation): it leaks.
    CHECK(r.summary.leaked_bytes == 2 * MiB);
    REQUIRE(r.leaks.size() == 1);
    CHECK(r.leaks[0].kind == Kind::Vmm);
    CHECK(r.leaks[0].api == "cuMemCreate");
    CHECK(r.errors.empty());
    // Timeline: 4 MiB, 6 MiB, then 2 MiB after the unmap ended a1 (t=8), then nothing
    // once the process ended (its trailer, t=11).
    auto points = r.timeline[0].points;
    REQUIRE(points.size() >= 2);
    CHECK(points[points.size() - 2] == std::pair<uint64_t, uint64_t>(8, 2 * MiB));
    CHECK(points.back() == std::pair<uint64_t, uint64_t>(11, 0));
}

TEST_CASE("VMM: releasing an unknown handle and unmapping nothing are invalid frees") {
    auto b = standardTrace();
    b.event(Ev::op(1, Op::VmmRelease, Api::cuMemRelease, 0, 0, 0x99));
    b.event(Ev::op(2, Op::VmmUnmap, Api::cuMemUnmap, 0x7f2000000000, 2 * MiB));
    auto r = report(b);
    REQUIRE(r.errors.size() == 2);
    CHECK(r.errors[0].type == analyzer::ErrorType::InvalidFree);
    CHECK(r.errors[1].api == "cuMemUnmap");
}

namespace {
format::Event withContext(format::Event e, uint64_t ctx) {
    e.context = ctx;
    return e;
}
} // namespace

TEST_CASE("device reset ends what the primary context owned; the leak says so") {
    auto b = standardTrace(2);
    const uint64_t primary0 = 0xc0, primary1 = 0xc1, user = 0xcc;
    b.event(withContext(Ev::alloc(1, 0x7f0000000000, 100), primary0));
    b.event(withContext(Ev::alloc(2, 0x7f0000100000, 200, Api::cudaMalloc, Kind::Device, 2, 1),
                        primary1));
    auto ctx = Ev::op(3, Op::CtxCreate, Api::cuCtxCreate_v4, 0, 0);
    ctx.context = user;
    ctx.kind = Kind::None;
    b.event(ctx);
    b.event(
        withContext(Ev::alloc(4, 0x7f0000200000, 400, Api::cuMemAlloc_v2, Kind::Device, 3), user));
    // Pinned host memory of device 0's primary context: no device, but the reset ends it.
    b.event(withContext(Ev::alloc(5, 0x10000, 800, Api::cudaMallocHost, Kind::HostPinned, 3, -1),
                        primary0));
    b.event(withContext(Ev::op(6, Op::VmmCreate, Api::cuMemCreate, 0, 2 * MiB, 0xa1), primary0));
    auto reset = Ev::op(7, Op::Teardown, Api::cudaDeviceReset, 0, 0);
    reset.kind = Kind::None;
    b.event(reset);
    // After the reset, the device is empty except the user context's and VMM memory.
    b.event(Ev::alloc(8, 0x7f0000300000, 1, Api::cudaMalloc, Kind::Device, 2));
    b.event(Ev::free(9, 0x7f0000300000));
    b.trailer(10);
    auto r = report(b);

    CHECK(r.summary.teardown_released_bytes == 900);
    CHECK(r.summary.leaked_bytes == 900 + 200 + 400 + 2 * MiB);
    bool found = false;
    for (const auto& l : r.leaks) {
        if (l.bytes == 100) {
            found = true;
            CHECK(l.released_by_teardown == true);
        }
        if (l.bytes == 200 || l.bytes == 400) {
            CHECK(l.released_by_teardown == false);
        }
    }
    CHECK(found);
    // Live on device 0 after the reset: 400 (user context) + 2 MiB (VMM) + 1.
    auto points = r.timeline[0].points;
    uint64_t max_after = 0;
    for (const auto& [time, bytes] : points) {
        if (time >= 8) {
            max_after = std::max<uint64_t>(max_after, bytes);
        }
    }
    CHECK(max_after == 400 + 2 * MiB + 1);
}

TEST_CASE("context destroy ends that context's allocations only") {
    auto b = standardTrace();
    auto ctx = Ev::op(1, Op::CtxCreate, Api::cuCtxCreate_v4, 0, 0);
    ctx.context = 0xcc;
    b.event(ctx);
    b.event(withContext(Ev::alloc(2, 0x7f0000000000, 100, Api::cuMemAlloc_v2), 0xcc));
    b.event(
        withContext(Ev::alloc(3, 0x7f0000200000, 300, Api::cuMemAlloc_v2, Kind::Device, 2), 0xc0));
    auto destroy = Ev::op(4, Op::Teardown, Api::cuCtxDestroy_v2, 0, 0);
    destroy.context = 0xcc;
    destroy.device = -1;
    b.event(destroy);
    b.trailer(5);
    auto r = report(b);
    REQUIRE(r.leaks.size() == 2);
    CHECK(r.leaks[0].bytes == 300);
    CHECK(r.leaks[0].released_by_teardown == false);
    CHECK(r.leaks[1].bytes == 100);
    CHECK(r.leaks[1].released_by_teardown == true);
}

// A freed pointer's node waits in its teardown list until it is reused or settled
// (Lifetimes::onFree): a reuse for another context, or for pool memory, moves it out;
// a reuse for the same context keeps it; a teardown never ends the freed allocation.
TEST_CASE("an address reused after a free is in its own context's teardown list") {
    constexpr uint64_t X = 0x7f0000000000, Y = 0x7f0000100000, Z = 0x7f0000200000,
                       W = 0x7f0000300000;
    auto destroy = [](uint64_t t, uint64_t ctx) {
        auto e = Ev::op(t, Op::Teardown, Api::cuCtxDestroy_v2, 0, 0);
        e.context = ctx;
        e.device = -1;
        return e;
    };
    auto trace = [&](bool destroy_dd) {
        auto b = standardTrace();
        uint64_t t = 1;
        for (uint64_t c : {0xccu, 0xddu, 0xeeu, 0xffu}) {
            auto e = Ev::op(t++, Op::CtxCreate, Api::cuCtxCreate_v4, 0, 0);
            e.context = c;
            b.event(e);
        }
        auto alloc = [&](uint64_t a, uint64_t size, uint64_t ctx, uint32_t stack,
                         Api api = Api::cuMemAlloc_v2, Kind kind = Kind::Device) {
            b.event(withContext(Ev::alloc(t++, a, size, api, kind, stack), ctx));
        };
        auto free = [&](uint64_t a, uint64_t ctx, Api api = Api::cuMemFree_v2) {
            b.event(withContext(Ev::free(t++, a, api), ctx));
        };
        alloc(X, 100, 0xcc, 11);
        free(X, 0xcc);
        alloc(X, 200, 0xdd, 12); // the node reused for another context
        alloc(Y, 300, 0xdd, 13);
        free(Y, 0xdd);
        alloc(Y, 400, 0xdd, 14); // for the same context
        alloc(Z, 500, 0xee, 15);
        free(Z, 0xee);
        alloc(Z, 600, 0xee, 16, Api::cudaMallocAsync, Kind::Pool); // pool memory: no list
        alloc(W, 700, 0xff, 17);
        free(W, 0xff); // still waiting in its list when its context is destroyed
        b.event(destroy(t++, 0xcc));
        b.event(destroy(t++, 0xff));
        b.event(destroy(t++, 0xee));
        if (destroy_dd) {
            b.event(destroy(t++, 0xdd));
        }
        b.trailer(t);
        return report(b);
    };
    auto leakAt = [](const analyzer::Report& r, uint32_t stack) {
        for (const auto& l : r.leaks) {
            if (l.stack_id == stack) {
                return l;
            }
        }
        FAIL("no leak at stack " << stack);
        return r.leaks.front();
    };
    {
        auto r = trace(false);
        CHECK(r.summary.teardown_released_bytes == 0);
        CHECK(r.summary.leaked_bytes == 200 + 400 + 600);
        REQUIRE(r.leaks.size() == 3);
        CHECK(leakAt(r, 12).released_by_teardown == false);
        CHECK(leakAt(r, 14).released_by_teardown == false);
        CHECK(leakAt(r, 16).released_by_teardown == false);
    }
    {
        auto r = trace(true);
        CHECK(r.summary.teardown_released_bytes == 200 + 400);
        REQUIRE(r.leaks.size() == 3);
        CHECK(leakAt(r, 12).released_by_teardown == true);
        CHECK(leakAt(r, 14).released_by_teardown == true);
        CHECK(leakAt(r, 16).released_by_teardown == false);
    }
}

TEST_CASE("several traces: one process entry each - totals summed - peak over both") {
    TempDir dir;
    auto a = standardTrace();
    a.event(Ev::alloc(10, 0x7f0000000000, 1000)).event(Ev::free(30, 0x7f0000000000)).trailer(40);
    auto h = TraceBuilder::defaultHeader();
    h.pid = 777;
    TraceBuilder b2;
    b2.header(h).device();
    b2.event(Ev::alloc(20, 0x7f0000000000, 500)).trailer(50);
    auto p1 = a.write(dir.file("a.gmtrace"));
    auto p2 = b2.write(dir.file("b.gmtrace"));
    analyzer::ReportOptions o;
    o.symbols = false;
    auto r = reportOf({p1, p2}, o);
    REQUIRE(r.processes.size() == 2);
    CHECK(r.processes[1].pid == 777);
    CHECK(r.summary.allocations == 2);
    CHECK(r.summary.leaked_bytes == 500);
    CHECK(r.leaks[0].pid == 777);
    // Interleaved by time: both live between t=20 and t=30.
    CHECK(r.summary.peak_bytes == 1500);
    CHECK(r.summary.peak_time_ns == 20);
}
