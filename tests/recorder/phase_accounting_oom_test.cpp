// The recorder's per-phase accounting (preload/phase_accounting.h) out of host memory at
// each of its allocations in turn. It runs on the writer thread and on the thread that asks
// for a phase's figures, in a library built without exceptions, where a std::bad_alloc that
// left it would end the traced program: it must keep the failure, say the phase's figures
// are unsettled (so the caller asks `gpumemtrace check`), and account the next phase afresh.
//
// Its own executable: the global operator new fails on request (failing_allocations.h), which
// no other test binary should carry.
#include "failing_allocations.h"
#include "phase_feed.h"

#include <catch2/catch.hpp>

using namespace gmt::preload::account_flags;
using namespace gmt::test;

namespace {

// A phase of device allocations at many stacks, half freed.
uint64_t devicePhase(Feed& f) {
    f.phase(PhaseKind::Push);
    for (uint32_t i = 0; i < 300; ++i) {
        f.alloc(0x100000 + 0x1000 * i, 256 + i, 1 + i);
    }
    for (uint32_t i = 0; i < 300; i += 2) {
        f.free(0x100000 + 0x1000 * i);
    }
    return f.phase(PhaseKind::Pop);
}

// A phase of tensors in segments of a caching allocator, one left allocated.
uint64_t blockPhase(Feed& f, uint64_t base) {
    f.phase(PhaseKind::Push);
    f.segment(base, 20 * kMiB);
    for (uint64_t i = 0; i < 8; ++i) {
        f.block(BlockAction::Alloc, base + i * kMiB, kMiB, static_cast<uint32_t>(3 + i));
    }
    for (uint64_t i = 1; i < 8; ++i) {
        f.block(BlockAction::FreeRequested, base + i * kMiB, 0);
        f.block(BlockAction::FreeCompleted, base + i * kMiB, 0);
    }
    return f.phase(PhaseKind::Pop);
}

bool sameFigures(const PhaseAccount& a, const PhaseAccount& b) {
    return a.unsettled == b.unsettled && a.allocations == b.allocations && a.frees == b.frees &&
           a.live_allocations == b.live_allocations && a.live_bytes == b.live_bytes &&
           a.peak_increase_bytes == b.peak_increase_bytes &&
           a.block_allocations == b.block_allocations && a.block_frees == b.block_frees &&
           a.live_blocks == b.live_blocks && a.live_block_bytes == b.live_block_bytes &&
           a.cached_allocations == b.cached_allocations && a.cached_bytes == b.cached_bytes;
}

} // namespace

TEST_CASE("device allocations: out of memory unsettles the phase, the next is exact") {
    Feed reference;
    const PhaseAccount expected = reference.closed(devicePhase(reference));
    REQUIRE(expected.unsettled == 0);
    REQUIRE(expected.live_allocations == 150);

    long failed = 0;
    for (long allowed : kFirstFailures) {
        CAPTURE(allowed);
        Feed f;
        g_failed_allocations = 0;
        uint64_t pop = 0;
        {
            Exhausted exhausted(Failing::TestThread, allowed);
            pop = devicePhase(f); // throws nothing: the test would end here
        }
        failed += g_failed_allocations;
        PhaseAccount a;
        REQUIRE(f.accounting.take(pop, a));
        if (g_failed_allocations > 0) {
            CHECK((a.unsettled & kOverflow) != 0);
        } else {
            CHECK(sameFigures(a, expected));
        }
        // Memory back: the next phase is counted afresh and exactly.
        const PhaseAccount next = f.closed(devicePhase(f));
        CHECK(sameFigures(next, expected));
    }
    CHECK(failed > 0);
}

TEST_CASE("tensors: out of memory unsettles the phase and every later one with blocks") {
    Feed reference;
    reference.settings("");
    const PhaseAccount expected = reference.closed(blockPhase(reference, kSeg));
    REQUIRE(expected.unsettled == kBlocks);
    REQUIRE(expected.live_blocks == 1);

    long failed = 0;
    for (long allowed : kFirstFailures) {
        CAPTURE(allowed);
        Feed f;
        f.settings("");
        g_failed_allocations = 0;
        uint64_t pop = 0;
        {
            Exhausted exhausted(Failing::TestThread, allowed);
            pop = blockPhase(f, kSeg);
        }
        failed += g_failed_allocations;
        PhaseAccount a;
        REQUIRE(f.accounting.take(pop, a));
        const PhaseAccount next = f.closed(blockPhase(f, kSmall));
        if (g_failed_allocations > 0) {
            CHECK((a.unsettled & kOverflow) != 0);
            // The allocator's layout is no longer the analyzer's: never claimed exact again.
            CHECK((next.unsettled & kBlocksInexact) != 0);
        } else {
            CHECK(sameFigures(a, expected));
            CHECK(next.unsettled == kBlocks);
        }
    }
    CHECK(failed > 0);
}
