// Sums of byte counts. Sizes in a trace are the trace writer's word: a crafted trace can
// hold an allocation of 2^64 - 1 bytes, and a plain sum of it and one of 2 bytes wraps to
// 1 ("leaked 1 B", a gate passed). Every sum of sizes in the analysis, the report and the
// checks goes through here instead: it stops at kSaturated, which the views show as "at
// least 16 EiB (saturated)" and the JSON carries as 18446744073709551615
// (docs/analysis.md, "Saturated figures"). Figures that also go down take away with
// subtractSaturating, which stops at 0: once saturated, a live figure may read low
// afterwards, but it never wraps.
#pragma once

#include <cstdint>

namespace gmt::analyzer {

inline constexpr uint64_t kSaturated = UINT64_MAX;

constexpr uint64_t saturatingAdd(uint64_t a, uint64_t b) {
    uint64_t sum = 0;
    return __builtin_add_overflow(a, b, &sum) ? kSaturated : sum;
}

// sum += amount, stopping at kSaturated.
constexpr void addSaturating(uint64_t& sum, uint64_t amount) {
    sum = saturatingAdd(sum, amount);
}

// figure -= amount, stopping at 0.
constexpr void subtractSaturating(uint64_t& figure, uint64_t amount) {
    figure -= figure < amount ? figure : amount;
}

} // namespace gmt::analyzer
