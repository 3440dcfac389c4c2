// PyTorch's caching allocator rules for the size of the block it hands out, with the
// settings it runs with (PYTORCH_CUDA_ALLOC_CONF, as the recorder saw the environment):
// what the analysis needs to rebuild the blocks' sizes from its block events, which give
// only the bytes each tensor asked for (docs/frameworks.md, "How blocks are rebuilt").
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace gmt::analyzer {

struct AllocatorRules {
    static constexpr uint64_t kMinBlockSize = 512;
    static constexpr uint64_t kSmallSize = 1 << 20;    // blocks up to this come from 2 MiB segments
    static constexpr uint64_t kSmallBuffer = 2 << 20;  // a small-pool segment
    static constexpr uint64_t kLargeBuffer = 20 << 20; // large-pool segment for 1-10 MiB requests
    static constexpr uint64_t kMinLargeAlloc = 10 << 20;
    static constexpr uint64_t kRoundLarge = 2 << 20;

    uint64_t max_split_size = UINT64_MAX; // max_split_size_mb
    bool expandable_segments = false;
    uint64_t roundup_divisions = 0; // roundup_power2_divisions:N (0, 1: plain 512-byte rounding)
    // Settings that do not change a block's size, only when segments are given back or
    // which allocator runs (the what-if replay, analysis/whatif/, models them).
    double garbage_collection_threshold = 0; // 0: off; else in (0, 1)
    bool async_backend = false;              // backend:cudaMallocAsync
    // Every setting that changes block sizes was understood: sizes rebuilt are exact.
    bool exact = true;
    std::string not_understood; // the first setting that was not

    // "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:128\n..." as the
    // recorder writes it (format::CachingAllocatorInfo::config).
    static AllocatorRules parse(std::string_view environment);
    // Calls item(key, value) for each "key:value" of one comma-separated settings list
    // ("expandable_segments:True,max_split_size_mb:128"), keys and values trimmed; a list
    // value ("[256:1,512:2]") stays one value.
    static void forEachItem(std::string_view list,
                            const std::function<void(std::string_view, std::string_view)>& item);

    // round_size: the block size of a request.
    uint64_t roundSize(uint64_t requested) const;
    // The size of a new segment for a rounded size (get_allocation_size).
    static uint64_t segmentSize(uint64_t rounded);
    // Whether a segment is the small pool's (blocks of at most kSmallSize). A segment of its
    // own is kSmallBuffer bytes; an expandable one maps pages of kSmallBuffer, the large
    // pool's of kLargeBuffer, so one of its blocks says which (`block_bytes`, 0 for none),
    // and else its size.
    static bool smallPool(uint64_t segment_bytes, bool expandable, uint64_t block_bytes);
    // Whether a free block of `free_bytes` is split to serve `rounded` bytes (should_split):
    // the block handed out is `rounded` bytes if so, the whole free block if not.
    bool splits(uint64_t free_bytes, uint64_t rounded, bool expandable_segment) const;
};

} // namespace gmt::analyzer
