// Shared by the driver tests: readable CUresult values and a current primary context.
//
// ctest runs each test case in its own process (catch_discover_tests), but every test also
// cleans up after itself so that the whole executable can be run at once.
#pragma once

#include <catch2/catch.hpp>
#include <cuda.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace Catch {
template <> struct StringMaker<CUresult> {
    static std::string convert(CUresult result) {
        const char* name = nullptr;
        cuGetErrorName(result, &name);
        return name != nullptr ? name : "CUresult(" + std::to_string(result) + ")";
    }
};
} // namespace Catch

namespace cudasim_test {

inline constexpr uint64_t kMiB = 1ull << 20;
inline constexpr uint64_t kGranule = 2 * kMiB;

// The capacity the test was configured with (CUDASIM_MEMORY_BYTES in the ctest environment).
inline uint64_t configured_capacity() {
    const char* text = std::getenv("CUDASIM_MEMORY_BYTES");
    return text != nullptr ? std::strtoull(text, nullptr, 10) : 80ull << 30;
}

// cuMemGetInfo's free bytes on the current context's device.
inline uint64_t free_bytes() {
    size_t free = 0;
    size_t total = 0;
    REQUIRE(cuMemGetInfo(&free, &total) == CUDA_SUCCESS);
    return free;
}

// Device memory in use on the current device, as cuMemGetInfo sees it.
inline uint64_t used_bytes() {
    size_t free = 0;
    size_t total = 0;
    REQUIRE(cuMemGetInfo(&free, &total) == CUDA_SUCCESS);
    return total - free;
}

// Initializes the driver and makes device `device`'s primary context current.
struct PrimaryContext {
    explicit PrimaryContext(int device = 0) : device(device) {
        REQUIRE(cuInit(0) == CUDA_SUCCESS);
        REQUIRE(cuDevicePrimaryCtxRetain(&ctx, device) == CUDA_SUCCESS);
        REQUIRE(cuCtxSetCurrent(ctx) == CUDA_SUCCESS);
    }
    ~PrimaryContext() {
        cuCtxSetCurrent(nullptr);
        cuDevicePrimaryCtxRelease(device);
    }
    PrimaryContext(const PrimaryContext&) = delete;
    PrimaryContext& operator=(const PrimaryContext&) = delete;

    int device;
    CUcontext ctx = nullptr;
};

inline bool granule_aligned(CUdeviceptr p) {
    return p % kGranule == 0;
}
inline CUdeviceptr granule_of(CUdeviceptr p) {
    return p & ~(kGranule - 1);
}

} // namespace cudasim_test
