#include "analysis/caching/allocator_rules.h"

#include "base/saturating.h"

#include <bit>
#include <charconv>
#include <cstdlib>
#include <string>

namespace gmt::analyzer {

namespace {

// size rounded up to a multiple of `unit`, or kSaturated where that multiple is past 2^64.
uint64_t roundUp(uint64_t size, uint64_t unit) {
    const uint64_t below = size - size % unit;
    return below == size ? size : saturatingAdd(below, unit);
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
        s.remove_suffix(1);
    }
    return s;
}

bool number(std::string_view s, uint64_t& out) {
    s = trim(s);
    return !s.empty() &&
           std::from_chars(s.data(), s.data() + s.size(), out).ptr == s.data() + s.size();
}

// One "key:value" of the comma-separated list. Settings that concern neither block sizes nor
// when segments are given back (pinned_*, release_lock_on_cudamalloc, ...) are skipped.
void apply(AllocatorRules& r, std::string_view key, std::string_view value) {
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

} // namespace

AllocatorRules AllocatorRules::parse(std::string_view environment) {
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

void AllocatorRules::forEachItem(
    std::string_view list, const std::function<void(std::string_view, std::string_view)>& item) {
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

uint64_t AllocatorRules::roundSize(uint64_t size) const {
    // A crafted trace can ask for nearly 2^64 bytes: rounding up past the largest size stops
    // at kSaturated (base/saturating.h) instead of wrapping to a tiny block.
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
            return saturatingAdd(floor, floor);
        }
        const uint64_t rounded = size & ~(step - 1);
        return rounded == size ? size : saturatingAdd(rounded, step);
    }
    return roundUp(size, kMinBlockSize);
}

uint64_t AllocatorRules::segmentSize(uint64_t rounded) {
    if (rounded <= kSmallSize) {
        return kSmallBuffer;
    }
    if (rounded < kMinLargeAlloc) {
        return kLargeBuffer;
    }
    return roundUp(rounded, kRoundLarge);
}

bool AllocatorRules::smallPool(uint64_t segment_bytes, bool expandable, uint64_t block_bytes) {
    if (!expandable) {
        return segment_bytes <= kSmallBuffer;
    }
    if (block_bytes != 0) {
        return block_bytes <= kSmallSize;
    }
    return segment_bytes % kLargeBuffer != 0;
}

bool AllocatorRules::splits(uint64_t free_bytes, uint64_t rounded, bool expandable_segment) const {
    if (free_bytes < rounded) {
        return false;
    }
    const uint64_t remaining = free_bytes - rounded;
    if (rounded <= kSmallSize || expandable_segments || expandable_segment) {
        return remaining >= kMinBlockSize;
    }
    return rounded < max_split_size && remaining > kSmallSize;
}

} // namespace gmt::analyzer
