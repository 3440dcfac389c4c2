// Durations for people: "850 ns", "12.5 µs", "1.25 ms", "3.40 s", "2.50 min". Three
// significant digits in the largest unit that keeps the value >= 1 (minutes past 60 s).
#pragma once

#include <cstdint>
#include <string>

namespace gmt::analyzer {

std::string humanDuration(uint64_t ns);

// A wall-clock moment (CLOCK_REALTIME nanoseconds): "2026-12-02 09:36:21 UTC".
std::string utcTime(uint64_t wall_ns);

// A moment relative to `origin`: "+1.25 ms" (or "-..." before it).
std::string relativeTime(uint64_t time_ns, uint64_t origin_ns);

} // namespace gmt::analyzer
