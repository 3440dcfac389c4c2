// Unit tests of the recorder's per-phase accounting (preload/phase_accounting.h): records
// fed in ring order as the log writer feeds them, and the figures of the phase a pop closed,
// or the flag that says they cannot settle a verdict. The end-to-end cases (the pytest
// plugin against `gpumemtrace check`) are in tests/cli/cli_e2e.py, pytest_accounting.
#include "phase_feed.h"

#include <catch2/catch.hpp>

#include <vector>

using namespace gmt::preload::account_flags;
using namespace gmt::test;

TEST_CASE("a phase that frees what it allocated: no leak, its peak above the push") {
    Feed f;
    f.alloc(0x9000, 1000); // before the phase: not its own
    f.phase(PhaseKind::Push);
    f.alloc(0x1000, 100);
    f.alloc(0x2000, 300, 2);
    f.free(0x1000);
    f.alloc(0x1000, 50);
    f.free(0x1000);
    f.free(0x2000);
    const PhaseAccount a = f.closed(f.phase(PhaseKind::Pop));
    CHECK(a.unsettled == 0);
    CHECK(a.allocations == 3);
    CHECK(a.frees == 3);
    CHECK(a.live_allocations == 0);
    CHECK(a.live_bytes == 0);
    CHECK(a.peak_increase_bytes == 400);
}

TEST_CASE("what a phase keeps is live at its pop; a later phase starts afresh") {
    Feed f;
    f.phase(PhaseKind::Push);
    f.alloc(0x1000, 64);
    const PhaseAccount kept = f.closed(f.phase(PhaseKind::Pop));
    CHECK(kept.live_allocations == 1);
    CHECK(kept.live_bytes == 64);

    f.phase(PhaseKind::Push);
    f.free(0x1000); // the earlier phase's: freed before this one
    const uint64_t pop = f.phase(PhaseKind::Pop);
    const PhaseAccount later = f.closed(pop);
    CHECK(later.unsettled == kFreedBefore);
    CHECK(later.live_allocations == 0);
    PhaseAccount none;
    CHECK_FALSE(f.accounting.take(pop - 1, none)); // no pop there
}

TEST_CASE("nested phases of the same thread are the phase's; the outer pop closes it") {
    Feed f;
    f.phase(PhaseKind::Push);
    f.phase(PhaseKind::Push);
    f.alloc(0x1000, 8);
    const uint64_t inner = f.phase(PhaseKind::Pop);
    f.phase(PhaseKind::Mark);
    f.free(0x1000);
    PhaseAccount a;
    CHECK_FALSE(f.accounting.take(inner, a));
    a = f.closed(f.phase(PhaseKind::Pop));
    CHECK(a.unsettled == 0);
    CHECK(a.allocations == 1);
    CHECK(a.peak_increase_bytes == 8);
}

TEST_CASE("only the accounted thread's push opens a phase; another thread's phase unsettles") {
    Feed f;
    f.phase(PhaseKind::Push, kOther);
    f.alloc(0x1000, 8);
    f.phase(PhaseKind::Pop, kOther);
    CHECK_FALSE(f.accounting.open());

    f.phase(PhaseKind::Push);
    f.phase(PhaseKind::Push, kOther);
    f.phase(PhaseKind::Pop, kOther);
    CHECK(f.closed(f.phase(PhaseKind::Pop)).unsettled == kOtherPhases);
}

TEST_CASE("events beyond the accounting unsettle the figures") {
    Feed f;
    SECTION("a caching allocator's block outside the segments it knows") {
        f.phase(PhaseKind::Push);
        f.block(BlockAction::Alloc, 0x1000, 8);
        CHECK(f.closed(f.phase(PhaseKind::Pop)).unsettled == (kBlocks | kBlocksInexact));
    }
    SECTION("host memory") {
        f.phase(PhaseKind::Push);
        f.event(Ev::alloc(0, 0x1000, 8, Api::cudaMallocHost, Kind::HostPinned));
        CHECK(f.closed(f.phase(PhaseKind::Pop)).unsettled == kOtherEvents);
    }
    SECTION("an address allocated again while live") {
        f.phase(PhaseKind::Push);
        f.alloc(0x1000, 8);
        f.alloc(0x1000, 8);
        CHECK(f.closed(f.phase(PhaseKind::Pop)).unsettled == kOtherEvents);
    }
    SECTION("failed calls change nothing") {
        f.phase(PhaseKind::Push);
        f.event(Ev::failed(0, 1 << 30, 2, 0, 0));
        f.alloc(0x1000, 8);
        Event refused = Ev::free(0, 0x1000);
        refused.result = 1; // refused: still allocated
        f.event(refused);
        const PhaseAccount a = f.closed(f.phase(PhaseKind::Pop));
        CHECK(a.unsettled == 0);
        CHECK(a.live_allocations == 1);
    }
}

TEST_CASE("a stack whose live bytes from the phase take three levels may grow") {
    Feed f;
    SECTION("one buffer at a time, the same size, many times: no growth") {
        f.phase(PhaseKind::Push);
        for (uint64_t i = 0; i < 10; ++i) {
            f.alloc(0x1000 + i * 0x100, 64);
            f.free(0x1000 + i * 0x100);
        }
        CHECK(f.closed(f.phase(PhaseKind::Pop)).unsettled == 0);
    }
    SECTION("two at once: two levels, no growth") {
        f.phase(PhaseKind::Push);
        f.alloc(0x1000, 64);
        f.alloc(0x2000, 64);
        f.free(0x1000);
        f.free(0x2000);
        CHECK(f.closed(f.phase(PhaseKind::Pop)).unsettled == 0);
    }
    SECTION("three at once") {
        f.phase(PhaseKind::Push);
        f.alloc(0x1000, 64);
        f.alloc(0x2000, 64);
        f.alloc(0x3000, 64);
        f.free(0x1000);
        f.free(0x2000);
        f.free(0x3000);
        CHECK(f.closed(f.phase(PhaseKind::Pop)).unsettled == kMayGrow);
    }
    SECTION("growing sizes, one at a time") {
        f.phase(PhaseKind::Push);
        for (uint64_t size : {64, 128, 256}) {
            f.alloc(0x1000, size);
            f.free(0x1000);
        }
        CHECK(f.closed(f.phase(PhaseKind::Pop)).unsettled == kMayGrow);
    }
    SECTION("three stacks, one buffer each") {
        f.phase(PhaseKind::Push);
        for (uint32_t stack : {1, 2, 3}) {
            f.alloc(0x1000 * stack, 64, stack);
        }
        for (uint32_t stack : {1, 2, 3}) {
            f.free(0x1000 * stack);
        }
        const PhaseAccount a = f.closed(f.phase(PhaseKind::Pop));
        CHECK(a.unsettled == 0);
        CHECK(a.peak_increase_bytes == 192);
    }
}

TEST_CASE("a pause in the phase unsettles it") {
    Feed f;
    f.phase(PhaseKind::Push);
    uint8_t body[64], framed[80];
    gmt::format::ByteWriter w(body, sizeof body);
    gmt::format::encodeRecording(w, {});
    gmt::format::ByteWriter r(framed, sizeof framed);
    gmt::format::appendRecord(r, gmt::format::RecordTag::Recording, body, w.size());
    f.accounting.onRecord(1, framed, static_cast<uint32_t>(r.size()));
    CHECK(f.closed(f.phase(PhaseKind::Pop)).unsettled == kPaused);
}

TEST_CASE("past its bound the accounting overflows rather than forgets") {
    Feed f;
    f.phase(PhaseKind::Push);
    for (uint64_t i = 0; i <= PhaseAccounting::kMaxLive; ++i) {
        f.alloc(0x1000 + i * 16, 16, static_cast<uint32_t>(i % 2));
    }
    const PhaseAccount a = f.closed(f.phase(PhaseKind::Pop));
    CHECK((a.unsettled & kOverflow) != 0);
}

TEST_CASE("the pushing thread's side: the pop that closed an accounted phase, and drops") {
    phase_accounting::resetThread();
    phase_accounting::accountThread(kTest);
    uint64_t pop = 0, dropped = 0;
    phase_accounting::claimed(PhaseKind::Push, kTest, true, 10, 5, 5);
    phase_accounting::claimed(PhaseKind::Push, kTest, true, 12, 5, 5);
    phase_accounting::claimed(PhaseKind::Pop, kTest, true, 14, 6, 6);
    CHECK_FALSE(phase_accounting::lastPop(pop, dropped)); // the nested pop
    phase_accounting::claimed(PhaseKind::Pop, kTest, true, 20, 7, 7);
    REQUIRE(phase_accounting::lastPop(pop, dropped));
    CHECK(pop == 20);
    CHECK(dropped == 2);

    SECTION("a record of the phase lost: unknown") {
        phase_accounting::claimed(PhaseKind::Push, kTest, true, 30, 7, 7);
        phase_accounting::claimed(PhaseKind::Mark, kTest, false, 0, 7, 8);
        phase_accounting::claimed(PhaseKind::Pop, kTest, true, 40, 8, 8);
        CHECK_FALSE(phase_accounting::lastPop(pop, dropped));
    }
    SECTION("another thread's push is not accounted") {
        phase_accounting::claimed(PhaseKind::Push, kOther, true, 30, 7, 7);
        phase_accounting::claimed(PhaseKind::Pop, kOther, true, 40, 8, 8);
        CHECK_FALSE(phase_accounting::lastPop(pop, dropped));
    }
}

TEST_CASE("tensors freed in the phase, their segments kept cached: no leak") {
    Feed f;
    f.phase(PhaseKind::Push);
    f.segment(kSeg, 20 * kMiB);
    f.block(BlockAction::Alloc, kSeg, 3 * kMiB + 1);
    f.segment(kSmall, 2 * kMiB);
    f.block(BlockAction::Alloc, kSmall, 1000, 8);
    f.block(BlockAction::FreeRequested, kSeg, 0);
    f.block(BlockAction::FreeCompleted, kSeg, 0);
    f.block(BlockAction::FreeRequested, kSmall, 0);
    f.block(BlockAction::FreeCompleted, kSmall, 0);
    const PhaseAccount a = f.closed(f.phase(PhaseKind::Pop));
    CHECK(a.unsettled == kBlocks);
    CHECK(a.block_allocations == 2);
    CHECK(a.block_frees == 2);
    CHECK(a.live_blocks == 0);
    // The segments stay: live, and the allocator's cache.
    CHECK(a.live_allocations == 2);
    CHECK(a.cached_allocations == 2);
    CHECK(a.cached_bytes == 22 * kMiB);
    CHECK(a.peak_increase_bytes == 22 * kMiB);
}

TEST_CASE("a tensor still allocated at the pop is the phase's leak, at its block's size") {
    Feed f;
    f.phase(PhaseKind::Push);
    f.segment(kSeg, 20 * kMiB);
    f.block(BlockAction::Alloc, kSeg, 3 * kMiB + 1); // rounded to 512 bytes, split off
    PhaseAccount a = f.closed(f.phase(PhaseKind::Pop));
    CHECK(a.unsettled == kBlocks);
    CHECK(a.live_blocks == 1);
    CHECK(a.live_block_bytes == 3 * kMiB + 512);

    SECTION("freed in a later phase: a free of memory from before, no leak of that one") {
        f.phase(PhaseKind::Push);
        f.block(BlockAction::FreeRequested, kSeg, 0);
        f.block(BlockAction::FreeCompleted, kSeg, 0);
        a = f.closed(f.phase(PhaseKind::Pop));
        CHECK(a.unsettled == kBlocks);
        CHECK(a.live_blocks == 0);
        CHECK(a.block_frees == 0);
    }
    SECTION("a block carved whole from a free block too small to split") {
        // 17 MiB left in the segment: a 16 MiB request leaves less than 1 MiB over,
        // so the whole free block is handed out (allocator_rules.h splits()).
        f.phase(PhaseKind::Push);
        f.block(BlockAction::Alloc, kSeg + 3 * kMiB + 512, 16 * kMiB);
        a = f.closed(f.phase(PhaseKind::Pop));
        CHECK(a.unsettled == kBlocks);
        CHECK(a.live_block_bytes == 17 * kMiB - 512);
    }
}

TEST_CASE("a freed block waits for its streams in place until free_completed") {
    Feed f;
    f.segment(kSmall, 2 * kMiB); // before the phase: the layout is followed all along
    f.phase(PhaseKind::Push);
    f.block(BlockAction::Alloc, kSmall, 4096);
    f.block(BlockAction::FreeRequested, kSmall, 0); // recorded on another stream
    f.block(BlockAction::Alloc, kSmall + 4096, 100, 8);
    f.block(BlockAction::FreeCompleted, kSmall, 0);
    f.block(BlockAction::FreeRequested, kSmall + 4096, 0);
    f.block(BlockAction::FreeCompleted, kSmall + 4096, 0);
    const PhaseAccount a = f.closed(f.phase(PhaseKind::Pop));
    CHECK(a.unsettled == kBlocks);
    CHECK(a.block_frees == 2);
    CHECK(a.live_allocations == 0);
    CHECK(a.peak_increase_bytes == 0);
}

TEST_CASE("a tensor site whose live bytes take three levels may grow") {
    Feed f;
    f.segment(kSmall, 2 * kMiB);
    f.phase(PhaseKind::Push);
    for (uint64_t i = 0; i < 3; ++i) {
        f.block(BlockAction::Alloc, kSmall + i * 4096, 4096);
    }
    CHECK(f.closed(f.phase(PhaseKind::Pop)).unsettled == (kBlocks | kMayGrow));
}

TEST_CASE("block events the accounting cannot place as the analysis does unsettle it") {
    Feed f;
    f.segment(kSeg, 20 * kMiB);
    f.phase(PhaseKind::Push);
    SECTION("a free of a block it does not know") {
        f.block(BlockAction::FreeRequested, kSeg + 512, 0);
    }
    SECTION("an out-of-memory") {
        f.block(BlockAction::Oom, 0, 64 * kMiB);
    }
    SECTION("an alloc where a block is still allocated") {
        f.block(BlockAction::Alloc, kSeg, 512);
        f.block(BlockAction::Alloc, kSeg, 512);
    }
    SECTION("a segment given back with a block in it") {
        f.block(BlockAction::Alloc, kSeg, 512);
        f.block(BlockAction::SegmentFree, kSeg, 20 * kMiB);
    }
    SECTION("a free at the interpreter's exit") {
        f.block(BlockAction::Alloc, kSeg, 512);
        f.block(BlockAction::FreeRequested, kSeg, 0, 7, gmt::format::kFlagInterpreterExiting);
    }
    SECTION("settings whose sizes are estimates") {
        f.settings("PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:[256:1,512:2]");
        f.block(BlockAction::Alloc, kSeg, 512);
    }
    SECTION("expandable segments, in this phase and every later one") {
        f.block(BlockAction::SegmentMap, 0x40000000, 20 * kMiB);
        CHECK(f.closed(f.phase(PhaseKind::Pop)).unsettled == (kBlocks | kBlocksInexact));
        f.phase(PhaseKind::Push);
        f.block(BlockAction::FreeRequested, 0x40000000, 0);
    }
    CHECK(f.closed(f.phase(PhaseKind::Pop)).unsettled & kBlocksInexact);
}

TEST_CASE("a segment from before the accounting began: its blocks are not placed") {
    PhaseAccounting accounting;
    phase_accounting::accountThread(0); // no thread asked yet: nothing followed
    CHECK_FALSE(accounting.wantsEvents());
    Feed f; // asks now
    CHECK(f.accounting.wantsEvents());
    f.phase(PhaseKind::Push);
    f.block(BlockAction::Alloc, kSeg, 512); // its segment_alloc was before
    CHECK(f.closed(f.phase(PhaseKind::Pop)).unsettled == (kBlocks | kBlocksInexact));
}
