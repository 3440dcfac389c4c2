// Errors: double, invalid and mismatched frees, with both stacks; and what is not an
// error (NULL, a free the driver refused).
#include "report_fixture.h"

#include <catch2/catch.hpp>

using namespace gmt;
using namespace gmt::test;
using format::Api;
using format::Kind;

namespace {
constexpr uint64_t B = 0x7f0000000000;
} // namespace

TEST_CASE("double free: the bad call's stack and the allocation's") {
    auto b = standardTrace();
    b.event(Ev::alloc(1, B, 100, Api::cudaMalloc, Kind::Device, 1));
    b.event(Ev::free(2, B, Api::cudaFree, Kind::Device, 2));
    b.event(Ev::free(3, B, Api::cudaFree, Kind::Device, 3));
    auto r = report(b);
    REQUIRE(r.errors.size() == 1);
    const auto& e = r.errors[0];
    CHECK(e.type == analyzer::ErrorType::DoubleFree);
    CHECK(e.api == "cudaFree");
    CHECK(e.address == 0x7f0000000000u);
    CHECK(e.time_ns == 3);
    CHECK(e.stack[0].address == 0x401200u);
    CHECK(e.allocation_stack[0].address == 0x401000u);
    CHECK(r.summary.errors == 1);
    CHECK(r.summary.frees == 1);
}

TEST_CASE("invalid free: an address never allocated") {
    auto b = standardTrace();
    b.event(Ev::free(1, B + 0x40, Api::cuMemFree_v2));
    auto r = report(b);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].type == analyzer::ErrorType::InvalidFree);
    CHECK(r.errors[0].allocation_stack.empty());
}

TEST_CASE("mismatched frees - both directions and arrays") {
    auto b = standardTrace();
    b.event(Ev::alloc(1, B, 100, Api::cudaMalloc));
    b.event(Ev::alloc(2, 0x10000, 200, Api::cudaMallocHost, Kind::HostPinned, 2, -1));
    b.event(Ev::alloc(3, 0x5550000, 300, Api::cudaMallocArray, Kind::Array, 3));
    auto hostOnDevice = Ev::free(4, B, Api::cudaFreeHost, Kind::HostPinned);
    hostOnDevice.result = 1; // the runtime refuses it: the allocation stays
    b.event(hostOnDevice);
    auto deviceOnHost = Ev::free(5, 0x10000, Api::cudaFree);
    deviceOnHost.result = 1;
    b.event(deviceOnHost);
    auto arrayOnPointer = Ev::free(6, B, Api::cudaFreeArray, Kind::Array);
    arrayOnPointer.result = 1;
    b.event(arrayOnPointer);
    auto pointerOnArray = Ev::free(7, 0x5550000, Api::cudaFree);
    pointerOnArray.result = 1;
    b.event(pointerOnArray);
    auto r = report(b);
    REQUIRE(r.errors.size() == 4);
    for (const auto& e : r.errors) {
        CHECK(e.type == analyzer::ErrorType::MismatchedFree);
        CHECK_FALSE(e.allocation_stack.empty());
    }
    CHECK(r.errors[0].api == "cudaFreeHost");
    CHECK(r.errors[0].allocation_api == "cudaMalloc");
    CHECK(r.errors[1].allocation_api == "cudaMallocHost");
    // Refused frees end nothing: everything leaks.
    CHECK(r.summary.leaked_bytes == 600);
    CHECK(r.summary.frees == 0);
}

TEST_CASE("freeing NULL is a no-op; a refused free keeps the allocation") {
    auto b = standardTrace();
    b.event(Ev::free(1, 0));
    b.event(Ev::free(2, 0, Api::cudaFreeHost));
    b.event(Ev::alloc(3, B, 100));
    auto refused = Ev::free(4, B);
    refused.result = 4; // cudaErrorCudartUnloading at exit
    b.event(refused);
    b.event(Ev::free(5, B)); // the real free: not a double free
    b.trailer(6);
    auto r = report(b);
    CHECK(r.errors.empty());
    CHECK(r.summary.leaked_bytes == 0);
    CHECK(r.summary.frees == 1);
}

TEST_CASE("host unregister of registered memory is a match - cudaFreeHost of it is not") {
    auto b = standardTrace();
    b.event(Ev::alloc(1, 0x20000, 4096, Api::cudaHostRegister, Kind::HostPinned, 1, -1));
    b.event(Ev::alloc(2, 0x30000, 4096, Api::cudaHostRegister, Kind::HostPinned, 1, -1));
    b.event(Ev::free(3, 0x20000, Api::cudaHostUnregister, Kind::HostPinned));
    b.event(Ev::free(4, 0x30000, Api::cudaFreeHost, Kind::HostPinned));
    auto r = report(b);
    REQUIRE(r.errors.size() == 1);
    CHECK(r.errors[0].type == analyzer::ErrorType::MismatchedFree);
    CHECK(r.errors[0].address == 0x30000u);
}
