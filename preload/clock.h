#pragma once

#include <cstdint>
#include <ctime>

namespace gmt::preload {

inline uint64_t nowNs(clockid_t clock = CLOCK_MONOTONIC) {
    timespec ts;
    clock_gettime(clock, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

} // namespace gmt::preload
