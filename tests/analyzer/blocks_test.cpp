// The tensor level (docs/frameworks.md): a caching allocator's block events, merged into the
// segments the process took from CUDA, with hand-built sequences and known answers — one of
// them the exact sequence PyTorch 2.11 produced on an H200, with the statistics it reported.
#include "block_events.h"
#include "report_fixture.h"

#include "analysis/caching/allocator_rules.h"
#include "base/saturating.h"
#include "report/report_json.h"

#include <catch2/catch.hpp>
#include <sstream>

using namespace gmt;
using namespace gmt::test;
using analyzer::AllocatorRules;
using format::Api;
using format::BlockAction;
using format::Kind;
using format::Op;

namespace {

constexpr uint64_t S = kSegmentBase;

// Stack 2 runs the allocator's own function, grow_segment (Python code 9), which the
// table of growSegmentTable() names a caching allocator.
void allocatorFunction(TraceBuilder& b) {
    tf::PythonCodeInfo code;
    code.id = 9;
    code.first_line = 1;
    code.filename = "/srv/allocator.py";
    code.name = "grow_segment";
    b.pythonCode(code);
    b.stack(2, {0x401000}, {{9, 0, 1}});
}

std::shared_ptr<analyzer::CachingAllocatorTable> growSegmentTable() {
    auto table = std::make_shared<analyzer::CachingAllocatorTable>();
    std::istringstream in("cache: grow_segment\n");
    table->extend(analyzer::patternLines(in, "t"));
    return table;
}

const analyzer::CachingReport& caching(const analyzer::Report& r) {
    REQUIRE(r.caching_allocator);
    return *r.caching_allocator;
}

} // namespace

TEST_CASE("PyTorch's rounding and splitting rules, and the settings that change them") {
    AllocatorRules r;
    CHECK(r.roundSize(1) == 512);
    CHECK(r.roundSize(1000) == 1024);
    CHECK(r.roundSize(1 << 20) == 1 << 20);
    CHECK(AllocatorRules::segmentSize(1024) == 2 << 20);
    CHECK(AllocatorRules::segmentSize(3 << 20) == 20 << 20);
    CHECK(AllocatorRules::segmentSize(26214400) == 27262976); // 25 MiB -> 26 MiB
    // Small blocks split when 512 bytes are left; large ones when more than 1 MiB is.
    CHECK(r.splits(2 << 20, 1024, false));
    CHECK_FALSE(r.splits(1535, 1024, false));
    CHECK(r.splits(20 << 20, 3 << 20, false));
    CHECK_FALSE(r.splits(26 << 20, 25 << 20, false)); // 1 MiB left: the whole block
    CHECK(r.splits(26 << 20, 25 << 20, true));        // an expandable segment's block splits
    r = AllocatorRules::parse("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,"
                              "max_split_size_mb:128, garbage_collection_threshold:0.6\n");
    CHECK(r.exact);
    CHECK(r.expandable_segments);
    CHECK(r.max_split_size == 128u << 20);
    CHECK(r.splits(26 << 20, 25 << 20, false)); // expandable_segments: every block splits
    // Which pool a segment is: by its size, or for an expandable one by a block in it.
    CHECK(AllocatorRules::smallPool(2 << 20, false, 0));
    CHECK_FALSE(AllocatorRules::smallPool(20 << 20, false, 512));
    CHECK(AllocatorRules::smallPool(8 << 20, true, 4096));
    CHECK_FALSE(AllocatorRules::smallPool(8 << 20, true, 2 << 20));
    CHECK(AllocatorRules::smallPool(8 << 20, true, 0));
    CHECK_FALSE(AllocatorRules::smallPool(40 << 20, true, 0));
    r = AllocatorRules::parse("PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:16\n");
    CHECK_FALSE(r.splits(40 << 20, 16 << 20, false)); // at max_split_size: never split
    CHECK(r.splits(40 << 20, 8 << 20, false));
    r = AllocatorRules::parse("PYTORCH_ALLOC_CONF=roundup_power2_divisions:4\n");
    CHECK(r.exact);
    CHECK(r.roundSize(1200) == 1536);                 // below 512 * 4: plain rounding
    CHECK(r.roundSize(5 << 20) == 5u << 20);          // on a step
    CHECK(r.roundSize((4 << 20) + 1) == 5u << 20);    // four steps between 4 and 8 MiB
    CHECK(r.roundSize((1 << 30) + 7) == 1280u << 20); // four steps between 1 and 2 GiB
    r = AllocatorRules::parse("PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:[256:1,>:4]\n");
    CHECK_FALSE(r.exact);
    CHECK(r.not_understood == "roundup_power2_divisions:[256:1,>:4]");
}

// torch 2.11 on an H200, default settings: the entries its trace tracker delivered and the
// statistics torch.cuda.memory_stats() gave afterwards (allocated 30426112, reserved
// 85983232, max_memory_allocated 63980544, max_memory_reserved 85983232).
TEST_CASE("PyTorch's own sequence: the peaks are max_memory_allocated and max_memory_reserved") {
    auto b = h200Sequence();
    const uint64_t st = kH200Stream;
    const analyzer::Report r = report(b);
    const auto& c = caching(r);
    REQUIRE(c.processes.size() == 1);
    const auto& a = c.processes[0];
    CHECK(a.status == "attached");
    CHECK(a.version == "2.11.0+cu130");
    CHECK(a.sizes_exact);
    CHECK(a.unmatched_events == 0);
    REQUIRE(a.devices.size() == 1);
    const auto& d = a.devices[0];
    CHECK(d.allocated_peak_bytes == 63980544);
    CHECK(d.allocated_peak_time_ns == 22);
    CHECK(d.reserved_peak_bytes == 85983232);
    CHECK(d.allocated_end_bytes == 30426112);
    CHECK(d.reserved_end_bytes == 85983232 - 33554432);
    CHECK(d.allocations == 6);
    CHECK(d.frees == 2);
    // The 25 MiB tensor took its whole 26 MiB segment (1 MiB left is no split).
    CHECK(c.tensor_peak.bytes == 63980544);
    REQUIRE(c.tensor_peak.top_sites.size() >= 2);
    CHECK(c.tensor_peak.top_sites[0].bytes == 33554432);
    CHECK(c.tensor_peak.top_sites[0].stack_id == 4);
    CHECK(c.tensor_peak.top_sites[1].bytes == 27262976);
    // Inside the segments at the peak: 2 MiB + 20 MiB + 26 MiB + 2 MiB + 32 MiB reserved.
    REQUIRE(c.fragmentation.size() == 1);
    const auto& f = c.fragmentation[0];
    CHECK(f.time_ns == 22);
    CHECK(f.reserved_bytes == 85983232);
    CHECK(f.allocated_bytes == 63980544);
    CHECK(f.reserved_unallocated_bytes == 85983232 - 63980544);
    // Free blocks: the small segment's [1 KiB, 2 MiB), the large one's 17 MiB, the
    // stream's small segment's 2 MiB - 16 KiB; all in segments with other blocks.
    CHECK(f.inactive_split_blocks == 3);
    CHECK(f.inactive_split_bytes == (2097152 - 1024) + (17u << 20) + (2097152 - 16384));
    CHECK(f.largest_free_bytes == 17u << 20);
    CHECK(f.releasable_bytes == 0);
    REQUIRE(f.streams.size() == 2);
    CHECK(f.streams[0].stream == 0);
    CHECK(f.streams[0].largest_free_bytes == 17u << 20);
    CHECK(f.streams[1].stream == st);
    CHECK(f.streams[1].largest_free_bytes == 2097152 - 16384);
    // Everything the tensors did not free leaks at the tensor level; every segment is the
    // cache's... except that no table entry matches this hand-built stack: segments leak.
    CHECK(r.summary.leaked_bytes >= 30426112);
}

TEST_CASE("blocks still allocated at the end are tensor-level leaks, inside held segments") {
    auto b = attached();
    // The segments' stack (2) runs the allocator's own function.
    allocatorFunction(b);
    segment(b, 1, S, 20u << 20);
    b.event(block(2, BlockAction::Alloc, S, 3u << 20, 0, 5));
    b.event(block(3, BlockAction::Alloc, S + (3u << 20), 5u << 20, 0, 6));
    b.event(block(4, BlockAction::FreeRequested, S + (3u << 20), 5u << 20));
    b.event(block(5, BlockAction::FreeCompleted, S + (3u << 20), 5u << 20));
    b.trailer(10);
    analyzer::ReportOptions options;
    options.caching_allocators = growSegmentTable();
    const analyzer::Report r = report(b, options);
    REQUIRE(r.leaks.size() == 1);
    CHECK(r.leaks[0].kind == Kind::Block);
    CHECK(r.leaks[0].api == "PyTorch caching allocator");
    CHECK(r.leaks[0].bytes == 3u << 20);
    CHECK(r.leaks[0].stack_id == 5);
    CHECK(r.summary.leaked_bytes == 3u << 20);
    CHECK(r.summary.held_at_exit_bytes == 20u << 20);
    CHECK(r.devices[0].leaked_bytes == 3u << 20);
}

TEST_CASE("freed only by the interpreter at exit: counted apart, by allocation stack") {
    auto b = attached();
    segment(b, 1, S, 20u << 20);
    b.event(block(2, BlockAction::Alloc, S, 3u << 20, 0, 5));
    b.event(block(3, BlockAction::Alloc, S + (3u << 20), 2u << 20, 0, 6));
    tf::Event exit_free = block(4, BlockAction::FreeRequested, S, 3u << 20);
    exit_free.flags |= format::kFlagInterpreterExiting;
    b.event(exit_free);
    b.event(block(5, BlockAction::FreeRequested, S + (3u << 20), 2u << 20));
    b.trailer(10);
    const analyzer::Report r = report(b);
    const auto& a = caching(r).processes[0];
    CHECK(a.exit_freed.bytes == 3u << 20);
    CHECK(a.exit_freed.blocks == 1);
    REQUIRE(a.exit_freed.top_sites.size() == 1);
    CHECK(a.exit_freed.top_sites[0].stack_id == 5);
    CHECK(a.exit_kept.bytes == 0);
}

// The interpreter finalized (it freed a block at exit) and left two blocks allocated, as
// PyTorch 2.11 left a model's parameters on the H200: not leaks, listed as kept. The same
// blocks without a finalization (os._exit) are leaks.
TEST_CASE("still allocated after the interpreter finalized: kept, not leaked") {
    for (const bool finalized : {true, false}) {
        CAPTURE(finalized);
        auto b = attached();
        segment(b, 1, S, 20u << 20);
        b.event(block(2, BlockAction::Alloc, S, 3u << 20, 0, 5));
        b.event(block(3, BlockAction::Alloc, S + (3u << 20), 2u << 20, 0, 6));
        b.event(block(4, BlockAction::Alloc, S + (5u << 20), 1u << 20, 0, 6));
        tf::Event exit_free = block(5, BlockAction::FreeRequested, S, 3u << 20);
        if (finalized) {
            exit_free.flags |= format::kFlagInterpreterExiting;
        }
        b.event(exit_free);
        b.trailer(10);
        const analyzer::Report r = report(b);
        const auto& a = caching(r).processes[0];
        size_t block_leaks = 0;
        for (const auto& l : r.leaks) {
            block_leaks += l.kind == Kind::Block ? 1 : 0;
        }
        if (finalized) {
            CHECK(block_leaks == 0);
            CHECK(a.exit_kept.bytes == 3u << 20);
            CHECK(a.exit_kept.blocks == 2);
            CHECK(a.exit_kept.sites == 1);
            REQUIRE(a.exit_kept.top_sites.size() == 1);
            CHECK(a.exit_kept.top_sites[0].stack_id == 6);
        } else {
            CHECK(block_leaks == 1);
            CHECK(a.exit_kept.bytes == 0);
        }
        // Both survive the JSON round trip.
        const analyzer::Report back = analyzer::fromJson(analyzer::toJson(r));
        CHECK(back.caching_allocator->processes[0].exit_kept.bytes == a.exit_kept.bytes);
        CHECK(back.caching_allocator->processes[0].exit_freed.bytes == a.exit_freed.bytes);
    }
}

TEST_CASE("expandable segments: mapped ranges join, blocks span them, unmapping splits them") {
    auto b = attached("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n");
    // Two 20 MiB pages mapped one after the other, as PyTorch grows a stream's segment.
    b.event(block(1, BlockAction::SegmentMap, S, 20u << 20));
    b.event(block(2, BlockAction::SegmentMap, S + (20u << 20), 20u << 20));
    b.event(block(3, BlockAction::Alloc, S, 30u << 20, 0, 5));          // spans both
    b.event(block(4, BlockAction::Alloc, S + (30u << 20), 1000, 0, 6)); // 1 KiB block
    b.event(block(5, BlockAction::FreeRequested, S, 30u << 20));
    b.event(block(6, BlockAction::FreeCompleted, S, 30u << 20));
    // empty_cache unmaps the first page, wholly free now.
    b.event(block(7, BlockAction::SegmentUnmap, S, 20u << 20));
    b.trailer(10);
    const analyzer::Report r = report(b);
    const auto& c = caching(r);
    const auto& a = c.processes[0];
    CHECK(a.sizes_exact);
    CHECK(a.unmatched_events == 0);
    const auto& d = a.devices[0];
    CHECK(d.reserved_peak_bytes == 40u << 20);
    CHECK(d.allocated_peak_bytes == (30u << 20) + 1024);
    CHECK(d.reserved_end_bytes == 20u << 20);
    REQUIRE(c.fragmentation.size() == 1);
    CHECK(c.fragmentation[0].segment_count == 1);        // the two pages are one range
    CHECK(c.fragmentation[0].inactive_split_bytes == 0); // PyTorch does not count them there
    CHECK(c.fragmentation[0].free_bytes == (10u << 20) - 1024);
}

TEST_CASE("the segments and blocks views lists: one entry per contiguous mapped range") {
    analyzer::LiveAccounting accounting(16);
    analyzer::BlockTracker t(0, accounting);
    t.setRules(AllocatorRules::parse("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n"));
    for (const tf::Event& e :
         {block(1, BlockAction::SegmentMap, S, 20u << 20),
          block(2, BlockAction::SegmentMap, S + (20u << 20), 20u << 20, 0),
          block(3, BlockAction::SegmentMap, S + (60u << 20), 20u << 20, 0), // after a hole
          block(4, BlockAction::Alloc, S + (20u << 20), 1000, 0, 6),
          block(5, BlockAction::Alloc, S + (60u << 20), 4096, 0, 7),
          block(6, BlockAction::FreeRequested, S + (60u << 20), 4096)}) {
        t.onEvent(e, analyzer::kNoPhase);
    }
    const auto segments = t.segments(0);
    REQUIRE(segments.size() == 2);
    CHECK((segments[0].address == S && segments[0].bytes == 40u << 20 && segments[0].expandable));
    CHECK((segments[1].address == S + (60u << 20) && segments[1].bytes == 20u << 20));
    const auto blocks = t.blocksIn(0, S, 40u << 20);
    REQUIRE(blocks.size() == 1);
    CHECK(blocks[0].address == S + (20u << 20));
    CHECK(blocks[0].bytes == 1024); // PyTorch's 512-byte rounding
    CHECK(blocks[0].requested == 1000);
    CHECK(blocks[0].stack == 6);
    CHECK(blocks[0].allocated);
    const auto pending = t.blocksIn(0, S + (60u << 20), 20u << 20);
    REQUIRE(pending.size() == 1);
    CHECK_FALSE(pending[0].allocated); // freed, waiting for its streams
    CHECK(t.segments(1).empty());
}

TEST_CASE("an OOM with enough free inside the segments is fragmentation; the hints say why") {
    auto b = attached();
    // Four 20 MiB segments, each with a 9 MiB block kept and 11 MiB free.
    for (int i = 0; i < 4; ++i) {
        const uint64_t seg = S + uint64_t(i) * (32u << 20);
        segment(b, 1 + i, seg, 20u << 20);
        b.event(block(10 + i, BlockAction::Alloc, seg, 9u << 20));
        b.event(block(20 + i, BlockAction::Alloc, seg + (9u << 20), 9u << 20));
        b.event(block(30 + i, BlockAction::FreeRequested, seg + (9u << 20), 9u << 20));
        b.event(block(31 + i, BlockAction::FreeCompleted, seg + (9u << 20), 9u << 20));
    }
    tf::Event oom = block(50, BlockAction::Oom, 0, 40u << 20, 0, 7);
    oom.device_free = 10u << 20;
    b.event(oom);
    b.trailer(60);
    const analyzer::Report r = report(b);
    const auto& c = caching(r);
    REQUIRE(c.ooms.size() == 1);
    const auto& o = c.ooms[0];
    CHECK(o.requested_bytes == 40u << 20);
    CHECK(o.device_free_bytes == 10u << 20);
    CHECK(o.fragmentation);
    CHECK(o.diagnosis.rfind("fragmentation inside segments: 44.00 MiB reserved but unallocated",
                            0) == 0);
    CHECK(o.space.largest_free_bytes == 11u << 20);
    CHECK(o.space.inactive_split_blocks == 4);
    CHECK(o.space.moment == analyzer::Moment::Failure);
    REQUIRE(o.hints.size() == 4);
    CHECK(o.hints[0].remedy == "expandable_segments");
    // [9, 20) MiB of each segment holds 5 whole 2 MiB pages: 40 MiB, and 10 MiB free on the
    // device: enough for 40 MiB.
    CHECK(o.hints[0].verdict == "would likely have avoided it");
    CHECK(o.hints[0].estimate);
    CHECK(o.hints[1].remedy == "max_split_size_mb");
    CHECK(o.hints[1].estimate);
    CHECK(o.hints[2].remedy == "empty_cache");
    CHECK(o.hints[2].verdict == "would not have helped");
    CHECK_FALSE(o.hints[2].estimate);
    CHECK(o.hints[3].remedy == "smaller batch");

    // Short in total: not fragmentation, and expandable segments would not have helped.
    auto b2 = attached();
    segment(b2, 1, S, 20u << 20);
    b2.event(block(2, BlockAction::Alloc, S, 19u << 20));
    tf::Event oom2 = block(3, BlockAction::Oom, 0, 40u << 20);
    oom2.device_free = 2u << 20;
    b2.event(oom2);
    b2.trailer(5);
    const analyzer::Report r2 = report(b2);
    const auto& o2 = caching(r2).ooms.at(0);
    CHECK_FALSE(o2.fragmentation);
    CHECK(o2.diagnosis.rfind("out of memory: tensors hold 20.00 MiB", 0) == 0);
    CHECK(o2.hints[0].verdict == "would not have helped");
    CHECK_FALSE(o2.hints[0].estimate);
    CHECK(o2.hints[3].verdict == "needed");
}

TEST_CASE("blocks the trace cannot place are counted, never invented") {
    auto b = attached();
    // A free of a block allocated before the tracker was attached, an allocation outside
    // every segment, a completion without its request.
    b.event(block(1, BlockAction::FreeRequested, S, 4096));
    b.event(block(2, BlockAction::Alloc, S + (64u << 20), 4096));
    segment(b, 3, S, 2u << 20);
    b.event(block(4, BlockAction::Alloc, S, 4096));
    b.event(block(5, BlockAction::FreeCompleted, S, 4096));
    b.event(block(6, static_cast<BlockAction>(99), S, 4096)); // an action no recorder writes
    b.trailer(10);
    const analyzer::Report r = report(b);
    const auto& a = caching(r).processes[0];
    CHECK(a.unmatched_events == 3);
    CHECK(a.estimated_blocks == 1);
    CHECK_FALSE(a.sizes_exact);
}

TEST_CASE("crafted sizes near 2^64: rounding and the block sums saturate, never wrap") {
    constexpr uint64_t kMax = analyzer::kSaturated;
    AllocatorRules r;
    CHECK(r.roundSize(kMax) == kMax); // 2^64 - 1 rounded up to 512: past the largest
    CHECK(r.roundSize(kMax - 600) == kMax - 511);
    CHECK(AllocatorRules::segmentSize(kMax - 1) == kMax);
    r = AllocatorRules::parse("PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:4\n");
    CHECK(r.roundSize(kMax - 1) == kMax); // the next step would be 2^64
    // The tracker places no event over 2^48 bytes (damage), so a crafted trace wraps a sum
    // with 2^16 + 1 of them: 2^64 + 2^48 bytes reserved and allocated, which plain sums read
    // as 2^48 (after a peak of 2^64 - 2^48).
    auto b = attached();
    constexpr uint64_t kLargest = uint64_t{1} << 48;
    for (uint64_t i = 0; i <= (1u << 16); ++i) {
        // The block events alone: the segments' own cudaMalloc events would overlap. The
        // blocks lie outside the segments (placed as estimates), so that measuring the
        // space inside the segments does not walk every block for every segment.
        const uint64_t at = 0x1000 + (i << 24);
        b.event(block(1 + 2 * i, BlockAction::SegmentAlloc, at, kLargest, 0, 2));
        b.event(
            block(2 + 2 * i, BlockAction::Alloc, (uint64_t{1} << 50) + (i << 24), kLargest, 0, 5));
    }
    b.trailer(1u << 20);
    const analyzer::Report rep = report(b);
    const auto& d = caching(rep).processes[0].devices[0];
    CHECK(d.reserved_peak_bytes == kMax);
    CHECK(d.allocated_peak_bytes == kMax);
}

TEST_CASE("the tensor level in JSON: valid against the schema, read back as written") {
    auto b = attached();
    segment(b, 1, S, 20u << 20);
    b.event(block(2, BlockAction::Alloc, S, 3u << 20, 0, 5));
    tf::Event oom = block(3, BlockAction::Oom, 0, 40u << 20);
    oom.device_free = 1u << 20;
    b.event(oom);
    b.trailer(10);
    const analyzer::Report r = report(b);
    const auto j = analyzer::toJson(r);
    auto errors = reportSchema().validate(j);
    INFO((errors.empty() ? "" : errors[0]));
    CHECK(errors.empty());
    CHECK(j["caching_allocator"]["ooms"][0]["space"]["moment"] == "oom");
    CHECK(j["leaks"][1]["kind"] == "block"); // after the segment holding it (no table entry)
    const analyzer::Report back = analyzer::fromJson(j);
    CHECK(analyzer::toJson(back) == j);
    // Without the tensor level the field is null.
    auto plain = standardTrace();
    plain.event(Ev::alloc(1, S, 4096));
    plain.trailer(2);
    const auto pj = analyzer::toJson(report(plain));
    CHECK(pj["caching_allocator"].is_null());
    CHECK(reportSchema().validate(pj).empty());
    CHECK_FALSE(analyzer::fromJson(pj).caching_allocator);
}

// A training loop in PyTorch's default mode that keeps one 1 MiB tensor per step in a list:
// the cache takes a 2 MiB segment each step (the kept tensors fill them), a 4 MiB working
// tensor is made and freed in it every step. Growth is found at the tensor level, at the
// line that keeps the tensor, and the segments the cache grows by are not listed again.
TEST_CASE("growth at the tensor level: the kept tensor's line, not the cache's segments") {
    for (const bool marks : {true, false}) {
        CAPTURE(marks);
        auto b = attached();
        allocatorFunction(b);
        constexpr uint32_t kWork = 7, kKept = 8;
        // As in PyTorch, a block's stack runs through the allocator's own function too.
        b.stack(kWork, {0x401000, 0x402000}, {{9, 0, 1}});
        b.stack(kKept, {0x401000, 0x403000}, {{9, 0, 1}});
        segment(b, 1, S, 8u << 20); // the working tensor's segment, cached from the start
        uint64_t t = 100;
        for (uint64_t i = 0; i < 50; ++i, t += 100) {
            if (marks) {
                b.phase(t, "step");
            }
            b.event(block(t + 1, BlockAction::Alloc, S, 4u << 20, 0, kWork));
            const uint64_t seg = S + (64u << 20) + i * (2u << 20);
            segment(b, t + 2, seg, 2u << 20);
            b.event(block(t + 3, BlockAction::Alloc, seg, 1u << 20, 0, kKept));
            b.event(block(t + 4, BlockAction::FreeRequested, S, 4u << 20));
            b.event(block(t + 5, BlockAction::FreeCompleted, S, 4u << 20));
        }
        b.trailer(t);
        analyzer::ReportOptions options;
        options.caching_allocators = growSegmentTable();
        const analyzer::Report r = report(b, options);
        REQUIRE(r.iterations.size() == 1);
        CHECK(r.iterations[0].source == (marks ? "phase" : "pattern"));
        if (!marks) {
            CHECK(r.iterations[0].stack_id == kWork); // the step's own allocation
        }
        REQUIRE(r.growth.size() == 1);
        CHECK(r.growth[0].stack_id == kKept);
        CHECK(r.growth[0].bytes_per_iteration == 1u << 20);
        CHECK(r.growth[0].growing_iterations == 49);
        CHECK(r.iterations[0].growing_sites == 1);

        // With --count-cached (no table) the cache's segments are the program's own: their
        // growth is listed too.
        options.caching_allocators = nullptr;
        const analyzer::Report counted = report(b, options);
        bool segments_listed = false;
        for (const auto& g : counted.growth) {
            segments_listed = segments_listed || g.stack_id == 2;
        }
        CHECK(segments_listed);
    }
}
