// Whole-number options with explicit bounds (`--top`, `--timeline-points`, `--frames`,
// `--jobs`).
// Every option that sizes what the analyzer holds or prints is bounded, so that a typo
// (`--timeline-points 10000000000`) is a one-line usage error, not an out-of-memory
// abort, and a value without meaning (`--top 0`) is refused with the range that has one.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>

namespace gmt::cli {

// Accepts decimal whole numbers from `min` to `max`; anything else (a sign, an exponent,
// a fraction, a number out of range) is rejected with a message naming the range.
CLI::Validator countRange(uint64_t min, uint64_t max);

// The largest `--top` of any command: more rows than anyone reads, few enough to build.
inline constexpr uint64_t kMaxTop = 1'000'000;
// The most frames shown per stack (a symbolized stack of 256 return addresses with
// inlined calls can have more).
inline constexpr uint64_t kMaxShownFrames = 4096;
// The most traces analysed at once (`--jobs`; 0: one per core): each holds a whole
// analysis in memory, so more than a large machine's cores only costs memory.
inline constexpr uint64_t kMaxJobs = 1024;

} // namespace gmt::cli
