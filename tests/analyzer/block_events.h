// Shared by the tests of the tensor level (blocks_test.cpp) and of the what-if replay
// (whatif_test.cpp): PyTorch block events as the recorder writes them, and one sequence
// PyTorch 2.11 really produced.
#pragma once

#include "report_fixture.h"

namespace gmt::test {

inline constexpr uint64_t kSegmentBase = 0x7f5b00000000; // segments are placed from here

inline tf::Event block(uint64_t t, format::BlockAction action, uint64_t address, uint64_t size,
                       uint64_t stream = 0, uint32_t stack = 1) {
    tf::Event e = Ev::make(t, format::Op::Block, static_cast<format::Api>(action),
                           format::Kind::Block, address, size, stack, 0);
    e.stream = stream;
    e.flags = static_cast<uint32_t>(format::BlockSource::PyTorch);
    return e;
}

// A segment as the recorder sees it: the cudaMalloc, then the allocator's segment_alloc.
inline void segment(TraceBuilder& b, uint64_t t, uint64_t address, uint64_t size,
                    uint64_t stream = 0) {
    b.event(Ev::alloc(t, address, size, format::Api::cudaMalloc, format::Kind::Device, 2));
    b.event(block(t, format::BlockAction::SegmentAlloc, address, size, stream, 2));
}

inline TraceBuilder attached(const std::string& config = "") {
    auto b = standardTrace();
    tf::CachingAllocatorInfo info;
    info.status = tf::CachingAllocatorStatus::Attached;
    info.version = "2.11.0+cu130";
    info.detail = "native";
    info.config = config;
    b.cachingAllocator(info);
    return b;
}

// torch 2.11 on an H200, default settings: the entries its trace tracker delivered, then the
// trailer. torch.cuda.memory_stats() gave afterwards: allocated 30426112, reserved
// 85983232, max_memory_allocated 63980544, max_memory_reserved 85983232; the program emptied
// the cache at the end (the 32 MiB segment given back).
inline constexpr uint64_t kH200Stream = 0x9f23b70;
inline TraceBuilder h200Sequence() {
    using format::BlockAction;
    constexpr uint64_t S = kSegmentBase;
    auto b = attached();
    const uint64_t s1 = S, s2 = S + (256u << 20), s3 = S + (512u << 20), s4 = S + (768u << 20),
                   s5 = S + (1024u << 20);
    const uint64_t st = kH200Stream;
    segment(b, 10, s1, 2097152);
    b.event(block(11, BlockAction::Alloc, s1, 1000));
    b.event(block(12, BlockAction::Alloc, s1 + 0x400, 1048576));
    segment(b, 13, s2, 20971520);
    b.event(block(14, BlockAction::Alloc, s2, 3145728));
    segment(b, 15, s3, 27262976);
    b.event(block(16, BlockAction::Alloc, s3, 26214400, 0, 3));
    b.event(block(17, BlockAction::FreeRequested, s1 + 0x400, 1048576));
    b.event(block(18, BlockAction::FreeCompleted, s1 + 0x400, 1048576));
    segment(b, 19, s4, 2097152, st);
    b.event(block(20, BlockAction::Alloc, s4, 16384, st));
    segment(b, 21, s5, 33554432, st);
    b.event(block(22, BlockAction::Alloc, s5, 33554432, st, 4));
    b.event(block(23, BlockAction::FreeRequested, s5, 33554432, st));
    b.event(block(24, BlockAction::FreeCompleted, s5, 33554432, st));
    b.event(block(25, BlockAction::SegmentFree, s5, 33554432, st));
    b.event(Ev::free(25, s5));
    b.trailer(30);
    return b;
}

} // namespace gmt::test
