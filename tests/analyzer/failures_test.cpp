// Failed allocations: the facts and the one-line diagnosis.
#include "report_fixture.h"

#include <catch2/catch.hpp>

using namespace gmt;
using namespace gmt::test;
using format::Api;
using format::Kind;

namespace {
constexpr uint64_t GiB = 1ull << 30;
constexpr uint64_t B = 0x7f0000000000;
} // namespace

TEST_CASE("more than the device has") {
    auto b = standardTrace();
    b.event(Ev::failed(5, 100 * GiB, 2, 79 * GiB, 80 * GiB));
    auto r = report(b);
    REQUIRE(r.failures.size() == 1);
    const auto& f = r.failures[0];
    CHECK(f.requested_bytes == 100 * GiB);
    CHECK(f.error == "cudaErrorMemoryAllocation");
    CHECK(f.api == "cudaMalloc");
    CHECK(f.device_free_bytes == 79 * GiB);
    CHECK(f.stack.size() == 2);
    CHECK_THAT(f.diagnosis, Catch::StartsWith("more than the device has"));
    CHECK(r.summary.failed_allocations == 1);
}

TEST_CASE("fragmentation: enough free in total - no hole large enough") {
    auto b = standardTrace();
    b.event(Ev::alloc(1, B, 10 * MiB));
    b.event(Ev::failed(5, 3 * GiB, 2, 4 * GiB, 80 * GiB, Api::cuMemAlloc_v2));
    auto r = report(b);
    const auto& f = r.failures[0];
    CHECK(f.error == "CUDA_ERROR_OUT_OF_MEMORY");
    CHECK(f.live_bytes == 10 * MiB);
    CHECK(f.largest_hole_bytes == 0);
    CHECK_THAT(f.diagnosis, Catch::StartsWith("fragmentation"));
    bool measured = false;
    for (const auto& fe : r.fragmentation) {
        measured = measured || fe.moment == analyzer::Moment::Failure;
    }
    CHECK(measured);
}

TEST_CASE("the traced program holds little: memory is used elsewhere") {
    auto b = standardTrace();
    b.event(Ev::alloc(1, B, 1 * GiB));
    b.event(Ev::failed(5, 2 * GiB, 2, 1 * GiB, 80 * GiB));
    auto r = report(b);
    CHECK_THAT(r.failures[0].diagnosis, Catch::StartsWith("the traced program holds little") &&
                                            Catch::Contains("other processes"));
}

TEST_CASE("the traced program holds the memory itself") {
    auto b = standardTrace();
    b.event(Ev::alloc(1, B, 79 * GiB));
    b.event(Ev::failed(5, 2 * GiB, 2, 1 * GiB, 80 * GiB));
    auto r = report(b);
    CHECK_THAT(r.failures[0].diagnosis,
               Catch::StartsWith("out of memory: the traced program holds 79.00 GiB"));
}

TEST_CASE("a failure that is not out of memory says so") {
    auto b = standardTrace();
    b.event(Ev::failed(5, 0, 1, 0, 0));
    auto r = report(b);
    const auto& f = r.failures[0];
    CHECK(f.error == "cudaErrorInvalidValue");
    CHECK_FALSE(f.device_free_bytes);
    CHECK_THAT(f.diagnosis, Catch::Contains("not for lack of memory"));
    CHECK(r.summary.allocations == 0);
}
