// PyTorch's caching allocator rules for the size of the block it hands out, with the
// settings it runs with (PYTORCH_CUDA_ALLOC_CONF, as the recorder saw the environment):
// what rebuilds the blocks' sizes from its block events, which give only the bytes each
// tensor asked for (docs/frameworks.md, "How blocks are rebuilt"). Both halves need them:
// the analysis (analyzer/analysis/caching/block_tracker.h) and the recorder's aggregated
// mode, which finds the tensor-level peak while it folds block events
// (preload/aggregator.h) and writes the sizes it rebuilt into the blocks it keeps.
#pragma once

#include <bit>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>

namespace gmt::format {

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

    // The block handed out for `requested` bytes at `address`: carved from the start of the
    // free block there, which ends at `free_end` (the next block or the segment's end), and
    // split or handed out whole. `in_segment`: a segment holds `address`; `overlaps`: the
    // block before it reaches past `address`. Either way wrong, something is missing from
    // the trace and the size is an estimate.
    struct Carved {
        uint64_t bytes = 0;
        bool exact = true;
    };
    Carved carve(uint64_t address, uint64_t requested, bool in_segment, uint64_t free_end,
                 bool expandable_segment, bool overlaps) const;
};

namespace rules_detail {
// a + b, stopping at UINT64_MAX (as the analysis's saturatingAdd).
constexpr uint64_t rulesAdd(uint64_t a, uint64_t b) {
    uint64_t sum = 0;
    return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

// size rounded up to a multiple of `unit`, or UINT64_MAX where that multiple is past 2^64.
inline uint64_t roundUp(uint64_t size, uint64_t unit) {
    const uint64_t below = size - size % unit;
    return below == size ? size : rulesAdd(below, unit);
}

inline std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
        s.remove_suffix(1);
    }
    return s;
}

inline bool number(std::string_view s, uint64_t& out) {
    s = trim(s);
    return !s.empty() &&
           std::from_chars(s.data(), s.data() + s.size(), out).ptr == s.data() + s.size();
}

// One "key:value" of the comma-separated list. Settings that concern neither block sizes nor
// when segments are given back (pinned_*, release_lock_on_cudamalloc, ...) are skipped.
inline void apply(AllocatorRules& r, std::string_view key, std::string_view value) {
    auto unknown = [&] {
        if (r.exact) {
            r.exact = false;
            r.not_understood = std::string(key) + ":" + std::string(value);
        }
    };
    if (key == "max_split_size_mb") {
        uint64_t mb = 0;
        if (number(value, mb) && mb > 0 && mb < (UINT64_MAX >> 20)) {
            r.max_split_size = mb << 20;
        } else {
            unknown();
        }
    } else if (key == "expandable_segments") {
        if (value == "True" || value == "true") {
            r.expandable_segments = true;
        } else if (value != "False" && value != "false") {
            unknown();
        }
    } else if (key == "garbage_collection_threshold") {
        // Only the replay uses it, so a bad value never makes rebuilt sizes estimates.
        const std::string text(value);
        char* end = nullptr;
        const double t = std::strtod(text.c_str(), &end);
        if (!text.empty() && end == text.c_str() + text.size() && t > 0 && t < 1) {
            r.garbage_collection_threshold = t;
        }
    } else if (key == "backend") {
        r.async_backend = value == "cudaMallocAsync";
    } else if (key == "roundup_power2_divisions") {
        uint64_t n = 0;
        if (number(value, n) && (n == 0 || std::has_single_bit(n))) {
            r.roundup_divisions = n;
        } else {
            unknown(); // the per-size list form: sizes are estimates
        }
    }
}

} // namespace rules_detail

inline AllocatorRules AllocatorRules::parse(std::string_view environment) {
    using namespace rules_detail;
    AllocatorRules r;
    while (!environment.empty()) {
        const size_t eol = environment.find('\n');
        std::string_view line = environment.substr(0, eol);
        environment =
            eol == std::string_view::npos ? std::string_view() : environment.substr(eol + 1);
        const size_t equals = line.find('=');
        if (equals == std::string_view::npos) {
            continue;
        }
        forEachItem(line.substr(equals + 1),
                    [&](std::string_view key, std::string_view value) { apply(r, key, value); });
    }
    return r;
}

inline void
AllocatorRules::forEachItem(std::string_view list,
                            const std::function<void(std::string_view, std::string_view)>& item) {
    using rules_detail::trim;
    int depth = 0;
    size_t start = 0;
    for (size_t i = 0; i <= list.size(); ++i) {
        if (i < list.size() && list[i] == '[') {
            ++depth;
        } else if (i < list.size() && list[i] == ']') {
            --depth;
        } else if (i == list.size() || (list[i] == ',' && depth == 0)) {
            const std::string_view one = trim(list.substr(start, i - start));
            const size_t colon = one.find(':');
            if (colon != std::string_view::npos) {
                item(trim(one.substr(0, colon)), trim(one.substr(colon + 1)));
            }
            start = i + 1;
        }
    }
}

inline uint64_t AllocatorRules::roundSize(uint64_t size) const {
    using namespace rules_detail;
    // A crafted trace can ask for nearly 2^64 bytes: rounding up past the largest size stops
    // at UINT64_MAX (the analysis's kSaturated, base/saturating.h) instead of wrapping to a tiny
    // block.
    if (size < kMinBlockSize) {
        return kMinBlockSize;
    }
    const uint64_t d = roundup_divisions;
    if (d > 1 && size > kMinBlockSize * d) {
        // The next of `d` equal steps between the powers of two around size.
        if (std::has_single_bit(size)) {
            return size;
        }
        const uint64_t floor = std::bit_floor(size);
        const uint64_t step = floor / d;
        if (step == 0) {
            return rulesAdd(floor, floor);
        }
        const uint64_t rounded = size & ~(step - 1);
        return rounded == size ? size : rulesAdd(rounded, step);
    }
    return roundUp(size, kMinBlockSize);
}

inline uint64_t AllocatorRules::segmentSize(uint64_t rounded) {
    using rules_detail::roundUp;
    if (rounded <= kSmallSize) {
        return kSmallBuffer;
    }
    if (rounded < kMinLargeAlloc) {
        return kLargeBuffer;
    }
    return roundUp(rounded, kRoundLarge);
}

inline bool AllocatorRules::smallPool(uint64_t segment_bytes, bool expandable,
                                      uint64_t block_bytes) {
    if (!expandable) {
        return segment_bytes <= kSmallBuffer;
    }
    if (block_bytes != 0) {
        return block_bytes <= kSmallSize;
    }
    return segment_bytes % kLargeBuffer != 0;
}

inline bool AllocatorRules::splits(uint64_t free_bytes, uint64_t rounded,
                                   bool expandable_segment) const {
    if (free_bytes < rounded) {
        return false;
    }
    const uint64_t remaining = free_bytes - rounded;
    if (rounded <= kSmallSize || expandable_segments || expandable_segment) {
        return remaining >= kMinBlockSize;
    }
    return rounded < max_split_size && remaining > kSmallSize;
}

inline AllocatorRules::Carved AllocatorRules::carve(uint64_t address, uint64_t requested,
                                                    bool in_segment, uint64_t free_end,
                                                    bool expandable_segment, bool overlaps) const {
    const uint64_t rounded = roundSize(requested);
    Carved c{rounded, exact && in_segment && !overlaps};
    if (!in_segment) {
        return c;
    }
    const uint64_t free_bytes = free_end - address;
    if (free_bytes < rounded) {
        c.exact = false;
    } else if (!splits(free_bytes, rounded, expandable_segment)) {
        c.bytes = free_bytes;
    }
    return c;
}

} // namespace gmt::format
