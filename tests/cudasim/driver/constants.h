// Numbers of the simulated hardware that several parts of the simulator agree on.
#pragma once

#include <cstdint>

namespace cudasim {

// CUDA's allocation granule on Hopper: large allocations, pool segments and VMM handles come
// in multiples of it, and small allocations are carved out of it.
inline constexpr uint64_t kGranule = 2ull << 20;
// Small allocations are rounded up to, and aligned on, 512 bytes: measured on an H200
// (driver 580.159), where cudaMalloc(1000), cudaMalloc(11001), cudaMalloc(1) land 1024 and
// 11264 bytes apart. (CUDA documents only the 256-byte alignment this implies.)
inline constexpr uint64_t kSmallAlignment = 512;
inline constexpr uint64_t kPitchAlignment = 512;
// Stream-ordered pools reserve device memory in steps of this size (measured on an H200: a
// 1 MiB cudaMallocAsync reserves 32 MiB; 41 MiB in use reserve 64 MiB).
inline constexpr uint64_t kPoolGrowth = 32ull << 20;
inline constexpr uint64_t kHostPageSize = 4096;

inline constexpr int kDriverVersion = 13000;
inline constexpr char kDeviceName[] = "NVIDIA H200 (cudasim)";

inline constexpr uint64_t kDefaultCapacity = 80ull << 30;
inline constexpr int kDefaultDeviceCount = 1;
inline constexpr int kMaxDeviceCount = 16;

constexpr uint64_t align_up(uint64_t value, uint64_t alignment) {
    return (value + alignment - 1) / alignment * alignment;
}

} // namespace cudasim
