// Physical VMM handles counted as the driver counts them: references (create, import,
// retain add one; release drops one) and mappings; imported memory belongs to the exporting
// process. Hand-built event sequences, read through the analysis itself (not the report).
#include "analysis/trace_analysis.h"
#include "report_fixture.h"

#include <catch2/catch.hpp>

using namespace gmt;
using namespace gmt::test;
using analyzer::ErrorType;
using analyzer::HandleOrigin;
using format::Api;
using format::Event;
using format::Op;

namespace {

constexpr uint64_t kVa = 0x7f1000000000;

Event create(uint64_t t, uint64_t handle, uint64_t size, int16_t device = 0) {
    return Ev::op(t, Op::VmmCreate, Api::cuMemCreate, 0, size, handle, 1, device);
}
Event import(uint64_t t, uint64_t handle, int16_t device = 0) {
    Event e =
        Ev::op(t, Op::VmmCreate, Api::cuMemImportFromShareableHandle, 0, 0, handle, 2, device);
    e.flags = format::kFlagImported;
    return e;
}
Event reserve(uint64_t t, uint64_t va, uint64_t size) {
    return Ev::op(t, Op::VmmReserve, Api::cuMemAddressReserve, va, size);
}
Event map(uint64_t t, uint64_t va, uint64_t size, uint64_t handle) {
    return Ev::op(t, Op::VmmMap, Api::cuMemMap, va, size, handle);
}
Event retain(uint64_t t, uint64_t address, uint64_t handle) {
    return Ev::op(t, Op::VmmRetain, Api::cuMemRetainAllocationHandle, address, 0, handle, 3);
}
Event release(uint64_t t, uint64_t handle) {
    return Ev::op(t, Op::VmmRelease, Api::cuMemRelease, 0, 0, handle, 3);
}
Event unmap(uint64_t t, uint64_t va, uint64_t size) {
    return Ev::op(t, Op::VmmUnmap, Api::cuMemUnmap, va, size);
}
Event addressFree(uint64_t t, uint64_t va, uint64_t size) {
    return Ev::op(t, Op::VmmAddressFree, Api::cuMemAddressFree, va, size);
}

// ncclCuMemAlloc then ncclCuMemFree of `handle` at `va`, events from time t on.
void ncclAllocFree(TraceBuilder& b, uint64_t t, uint64_t handle, uint64_t va, uint64_t size) {
    b.event(create(t, handle, size));
    b.event(reserve(t + 1, va, size));
    b.event(map(t + 2, va, size, handle));
    b.event(retain(t + 3, va + size / 2, handle)); // any address inside the mapping
    b.event(release(t + 4, handle));
    b.event(unmap(t + 5, va, size));
    b.event(release(t + 6, handle));
    b.event(addressFree(t + 7, va, size));
}

struct Analyzed {
    TempDir dir;
    analyzer::Analysis analysis;
    const analyzer::Lifetimes& lifetimes() const { return *analysis.processes().at(0)->lifetimes; }
    uint64_t peak() const { return analysis.accounting().peak().bytes; }
    uint64_t leakedBytes() const {
        uint64_t bytes = 0;
        for (const auto& [key, group] : lifetimes().leaks()) {
            bytes += group.bytes;
        }
        return bytes;
    }
};

// Analyses what `b` holds; `finish` false stops before the end-of-trace leak collection,
// so the live state can be looked at.
std::unique_ptr<Analyzed> analyze(TraceBuilder& b) {
    auto a = std::make_unique<Analyzed>();
    std::string path = b.write(a->dir.file("t.gmtrace"));
    analyzer::analyzeTraces({path}, a->analysis);
    return a;
}

} // namespace

TEST_CASE("NCCL's free (retain by address, release, unmap, release) is no error") {
    auto b = standardTrace();
    ncclAllocFree(b, 10, 0xa1, kVa, 4 * MiB);
    ncclAllocFree(b, 20, 0xa2, kVa + 64 * MiB, 2 * MiB);
    b.trailer(40);
    auto a = analyze(b);
    CHECK(a->lifetimes().errors().empty());
    CHECK(a->lifetimes().counters().errors == 0);
    CHECK(a->lifetimes().leaks().empty());
    CHECK(a->lifetimes().handles().empty());
    CHECK(a->lifetimes().counters().allocations == 2);
    CHECK(a->lifetimes().counters().frees == 2);
    CHECK(a->peak() == 4 * MiB);
}

TEST_CASE("the memory lives until the last reference is released and the last mapping unmapped") {
    auto b = standardTrace();
    b.event(create(1, 0xa1, 4 * MiB));
    b.event(reserve(2, kVa, 4 * MiB));
    b.event(map(3, kVa, 4 * MiB, 0xa1));
    b.event(retain(4, kVa, 0xa1));
    b.event(retain(5, kVa + MiB, 0xa1)); // three references now
    b.event(unmap(6, kVa, 4 * MiB));
    b.event(release(7, 0xa1));
    b.event(release(8, 0xa1)); // one reference left: still held, unmapped
    b.trailer(9);
    auto a = analyze(b);
    CHECK(a->lifetimes().errors().empty());
    REQUIRE(a->lifetimes().handles().contains(0xa1));
    CHECK(a->lifetimes().handles().at(0xa1).references == 1);
    CHECK(a->lifetimes().handles().at(0xa1).mappings == 0);
    CHECK(a->leakedBytes() == 4 * MiB); // never released by its last reference
    CHECK(a->lifetimes().counters().frees == 0);
}

TEST_CASE("releasing more often than created and retained is a double free - unknown is invalid") {
    auto b = standardTrace();
    b.event(create(1, 0xa1, 2 * MiB));
    b.event(reserve(2, kVa, 2 * MiB));
    b.event(map(3, kVa, 2 * MiB, 0xa1));
    b.event(release(4, 0xa1)); // fine: the mapping keeps the memory
    b.event(release(5, 0xa1)); // no reference left
    b.event(release(6, 0x99)); // never held
    b.event(unmap(7, kVa, 2 * MiB));
    b.trailer(8);
    auto a = analyze(b);
    const auto& errors = a->lifetimes().errors();
    REQUIRE(errors.size() == 2);
    CHECK(errors[0].type == ErrorType::DoubleFree);
    CHECK(errors[0].address == 0xa1);
    CHECK(errors[0].allocation_stack == 1);
    CHECK(errors[1].type == ErrorType::InvalidFree);
    CHECK(errors[1].address == 0x99);
    CHECK(a->lifetimes().handles().empty()); // the unmap ended it
    CHECK(a->leakedBytes() == 0);
}

TEST_CASE("imported memory is the exporter's: mapped and released, never counted or leaked") {
    auto b = standardTrace(2);
    // Another rank's buffer, on device 1, as NCCL's p2p transport maps it.
    b.event(import(1, 0xb1, 1));
    b.event(reserve(2, kVa, 8 * MiB));
    b.event(map(3, kVa, 6 * MiB, 0xb1));
    b.event(release(4, 0xb1)); // NCCL keeps only the mapping
    b.event(create(5, 0xa1, 2 * MiB));
    // A second import, never released: still not this process's leak.
    b.event(import(6, 0xb2, 1));
    b.event(map(7, kVa + 6 * MiB, 2 * MiB, 0xb2));
    SECTION("while mapped") {
        b.trailer(8);
        auto a = analyze(b);
        const auto& handles = a->lifetimes().handles();
        REQUIRE(handles.contains(0xb1));
        CHECK(handles.at(0xb1).origin == HandleOrigin::Imported);
        CHECK(handles.at(0xb1).size == 6 * MiB); // what was mapped of it
        CHECK(handles.at(0xb1).device == 1);
        CHECK(handles.at(0xb1).references == 0);
        CHECK(handles.at(0xb1).mappings == 1);
        CHECK(a->peak() == 2 * MiB); // only the handle created here
        CHECK(a->leakedBytes() == 2 * MiB);
        CHECK(a->lifetimes().counters().allocations == 1);
        CHECK(a->lifetimes().counters().imported_handles == 2);
        CHECK(a->lifetimes().errors().empty());
    }
    SECTION("freed the NCCL way") {
        b.event(retain(8, kVa, 0xb1));
        b.event(release(9, 0xb1));
        b.event(unmap(10, kVa, 6 * MiB));
        b.event(release(11, 0xa1));
        b.trailer(12);
        auto a = analyze(b);
        CHECK(a->lifetimes().errors().empty());
        CHECK_FALSE(a->lifetimes().handles().contains(0xb1));
        CHECK(a->leakedBytes() == 0);
        CHECK(a->lifetimes().counters().frees == 1); // the created handle only
    }
}

TEST_CASE("an import that returns a handle still held is one more reference to it") {
    // The driver may hand back the exporter's own handle to an import in the same process.
    auto b = standardTrace();
    b.event(create(1, 0xa1, 4 * MiB));
    b.event(import(2, 0xa1));
    b.event(release(3, 0xa1));
    SECTION("one release left") {
        b.trailer(4);
        auto a = analyze(b);
        CHECK(a->lifetimes().errors().empty());
        CHECK(a->leakedBytes() == 4 * MiB);
    }
    SECTION("both released") {
        b.event(release(4, 0xa1));
        b.trailer(5);
        auto a = analyze(b);
        CHECK(a->lifetimes().errors().empty());
        CHECK(a->leakedBytes() == 0);
        CHECK(a->peak() == 4 * MiB); // counted once
    }
}

TEST_CASE("a retained handle the trace never saw created is followed, not blamed") {
    auto b = standardTrace();
    b.event(reserve(1, kVa, 2 * MiB));
    b.event(map(2, kVa, 2 * MiB, 0xc1)); // created before tracing, or by an unseen route
    b.event(retain(3, kVa, 0xc1));
    b.event(release(4, 0xc1));
    b.event(release(5, 0xc1)); // its unseen first reference
    b.event(unmap(6, kVa, 2 * MiB));
    b.trailer(7);
    auto a = analyze(b);
    CHECK(a->lifetimes().errors().empty());
    CHECK(a->lifetimes().handles().empty());
    CHECK(a->leakedBytes() == 0);
    CHECK(a->peak() == 0);
}

TEST_CASE("a mapping made over one whose unmap was lost ends the old one") {
    auto b = standardTrace();
    b.event(create(1, 0xa1, 2 * MiB));
    b.event(create(2, 0xa2, 2 * MiB));
    b.event(reserve(3, kVa, 2 * MiB));
    b.event(map(4, kVa, 2 * MiB, 0xa1));
    b.event(release(5, 0xa1));
    b.event(map(6, kVa, 2 * MiB, 0xa2)); // a1's unmap was not recorded
    b.trailer(7);
    auto a = analyze(b);
    CHECK_FALSE(a->lifetimes().handles().contains(0xa1));
    CHECK(a->lifetimes().handles().at(0xa2).mappings == 1);
    CHECK(a->lifetimes().counters().implicit_ends == 1);
    CHECK(a->leakedBytes() == 2 * MiB);
}
