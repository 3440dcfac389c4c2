// Where the simulated driver puts device memory, and how it reuses it.
#include "driver_test_support.h"

#include <algorithm>
#include <vector>

using namespace cudasim_test;

TEST_CASE("allocations of 2 MiB or more take whole granules", "[placement]") {
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();

    CUdeviceptr big = 0;
    REQUIRE(cuMemAlloc(&big, 3 * kMiB) == CUDA_SUCCESS);
    CHECK(granule_aligned(big));
    CHECK(used_bytes() - used_before == 4 * kMiB); // 3 MiB rounds up to two granules

    CUdeviceptr next = 0;
    REQUIRE(cuMemAlloc(&next, 2 * kMiB) == CUDA_SUCCESS);
    CHECK(granule_aligned(next));
    CHECK(next == big + 4 * kMiB);

    CHECK(cuMemFree(big) == CUDA_SUCCESS);
    CHECK(cuMemFree(next) == CUDA_SUCCESS);
    CHECK(used_bytes() == used_before);
}

// Spacing measured on an H200: sizes round up to 512 bytes.
TEST_CASE("small allocations share a granule, rounded to 512 bytes", "[placement]") {
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();

    CUdeviceptr a = 0;
    CUdeviceptr b = 0;
    CUdeviceptr c = 0;
    REQUIRE(cuMemAlloc(&a, 1000) == CUDA_SUCCESS);
    REQUIRE(cuMemAlloc(&b, 11001) == CUDA_SUCCESS);
    REQUIRE(cuMemAlloc(&c, 1) == CUDA_SUCCESS);
    CHECK(a % 512 == 0);
    CHECK(b == a + 1024);  // 1000 rounded up to 512
    CHECK(c == b + 11264); // 11001 rounded up to 512
    CHECK(granule_of(a) == granule_of(c));
    CHECK(used_bytes() - used_before == kGranule); // one granule holds all three

    CHECK(cuMemFree(a) == CUDA_SUCCESS);
    CHECK(cuMemFree(b) == CUDA_SUCCESS);
    CHECK(used_bytes() - used_before == kGranule); // c still pins the granule
    CHECK(cuMemFree(c) == CUDA_SUCCESS);
    CHECK(used_bytes() == used_before); // an empty granule goes back at once
}

TEST_CASE("a request that rounds up to a granule is a large allocation", "[placement]") {
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();
    CUdeviceptr almost = 0;
    REQUIRE(cuMemAlloc(&almost, kGranule - 100) == CUDA_SUCCESS);
    CHECK(granule_aligned(almost));
    CHECK(used_bytes() - used_before == kGranule);
    CHECK(cuMemFree(almost) == CUDA_SUCCESS);
    CHECK(used_bytes() == used_before);
}

TEST_CASE("freed space is reused first fit and coalesced", "[placement]") {
    PrimaryContext primary;

    CUdeviceptr small[4] = {};
    for (auto& p : small) {
        REQUIRE(cuMemAlloc(&p, 256) == CUDA_SUCCESS);
    }
    CHECK(cuMemFree(small[0]) == CUDA_SUCCESS);
    CUdeviceptr again = 0;
    REQUIRE(cuMemAlloc(&again, 200) == CUDA_SUCCESS);
    CHECK(again == small[0]);

    // Two neighbouring 512-byte holes merge into one that fits a request neither fits alone.
    CHECK(cuMemFree(small[1]) == CUDA_SUCCESS);
    CHECK(cuMemFree(small[2]) == CUDA_SUCCESS);
    CUdeviceptr merged = 0;
    REQUIRE(cuMemAlloc(&merged, 1000) == CUDA_SUCCESS);
    CHECK(merged == small[1]);

    CUdeviceptr big = 0;
    REQUIRE(cuMemAlloc(&big, 6 * kMiB) == CUDA_SUCCESS);
    CHECK(cuMemFree(big) == CUDA_SUCCESS);
    CUdeviceptr big_again = 0;
    REQUIRE(cuMemAlloc(&big_again, 5 * kMiB) == CUDA_SUCCESS);
    CHECK(big_again == big);

    for (CUdeviceptr p : {again, merged, small[3], big_again}) {
        CHECK(cuMemFree(p) == CUDA_SUCCESS);
    }
}

TEST_CASE("holes between live blocks are not usable by a larger request", "[placement]") {
    PrimaryContext primary;
    std::vector<CUdeviceptr> blocks(8);
    for (auto& p : blocks) {
        REQUIRE(cuMemAlloc(&p, 2 * kMiB) == CUDA_SUCCESS);
    }
    for (size_t i = 0; i < blocks.size(); i += 2) {
        REQUIRE(cuMemFree(blocks[i]) == CUDA_SUCCESS);
    }
    CUdeviceptr large = 0;
    REQUIRE(cuMemAlloc(&large, 4 * kMiB) == CUDA_SUCCESS);
    CHECK(large > blocks.back()); // every 2 MiB hole is too small
    CHECK(cuMemFree(large) == CUDA_SUCCESS);
    for (size_t i = 1; i < blocks.size(); i += 2) {
        CHECK(cuMemFree(blocks[i]) == CUDA_SUCCESS);
    }
}

TEST_CASE("devices have disjoint address ranges and separate capacity", "[placement]") {
    REQUIRE(cuInit(0) == CUDA_SUCCESS);
    int count = 0;
    REQUIRE(cuDeviceGetCount(&count) == CUDA_SUCCESS);
    REQUIRE(count >= 2); // the ctest environment sets CUDASIM_DEVICES=2

    std::vector<CUdeviceptr> on[2];
    uint64_t used_before[2] = {};
    for (int d = 0; d < 2; ++d) {
        PrimaryContext primary(d);
        used_before[d] = used_bytes();
        for (uint64_t size : {uint64_t{256}, uint64_t{11001}, 3 * kMiB, uint64_t{1234567}}) {
            CUdeviceptr p = 0;
            REQUIRE(cuMemAlloc(&p, size) == CUDA_SUCCESS);
            int ordinal = -1;
            REQUIRE(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, p) ==
                    CUDA_SUCCESS);
            CHECK(ordinal == d);
            on[d].push_back(p);
        }
        CHECK(used_bytes() - used_before[d] == 6 * kMiB); // one small-block granule + 4 MiB
        // Keep the allocations alive across the next device's turn.
        REQUIRE(cuDevicePrimaryCtxRetain(&primary.ctx, d) == CUDA_SUCCESS);
    }
    auto [min0, max0] = std::minmax_element(on[0].begin(), on[0].end());
    auto [min1, max1] = std::minmax_element(on[1].begin(), on[1].end());
    CHECK((*max0 < *min1 || *max1 < *min0));

    for (int d = 0; d < 2; ++d) {
        PrimaryContext primary(d);
        for (CUdeviceptr p : on[d]) {
            CHECK(cuMemFree(p) == CUDA_SUCCESS);
        }
        CHECK(used_bytes() == used_before[d]);
        REQUIRE(cuDevicePrimaryCtxRelease(d) == CUDA_SUCCESS);
    }
}

TEST_CASE("pitched allocations round the pitch to 512 bytes", "[placement]") {
    PrimaryContext primary;
    CUdeviceptr p = 0;
    size_t pitch = 0;
    REQUIRE(cuMemAllocPitch(&p, &pitch, 1000, 300, 4) == CUDA_SUCCESS);
    CHECK(pitch == 1024);
    CUdeviceptr base = 0;
    size_t size = 0;
    REQUIRE(cuMemGetAddressRange(&base, &size, p + 5000) == CUDA_SUCCESS);
    CHECK(base == p);
    CHECK(size == 1024 * 300);
    CHECK(cuMemFree(p) == CUDA_SUCCESS);

    REQUIRE(cuMemAllocPitch(&p, &pitch, 512, 2, 16) == CUDA_SUCCESS);
    CHECK(pitch == 512);
    CHECK(cuMemFree(p) == CUDA_SUCCESS);

    CHECK(cuMemAllocPitch(&p, &pitch, 512, 2, 3) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("freeing what is not a live allocation is an invalid value", "[placement]") {
    PrimaryContext primary;
    CUdeviceptr device = 0;
    REQUIRE(cuMemAlloc(&device, 11001) == CUDA_SUCCESS);
    void* host = nullptr;
    REQUIRE(cuMemAllocHost(&host, 11001) == CUDA_SUCCESS);

    CHECK(cuMemFree(device + 256) == CUDA_ERROR_INVALID_VALUE); // interior pointer
    CHECK(cuMemFree(reinterpret_cast<CUdeviceptr>(host)) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemFreeHost(reinterpret_cast<void*>(device)) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemFree(0) == CUDA_SUCCESS);

    CHECK(cuMemFree(device) == CUDA_SUCCESS);
    CHECK(cuMemFree(device) == CUDA_ERROR_INVALID_VALUE); // double free
    CHECK(cuMemFreeHost(host) == CUDA_SUCCESS);
    CHECK(cuMemFreeHost(host) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("allocation calls need cuInit and a current context", "[placement]") {
    REQUIRE(cuInit(0) == CUDA_SUCCESS);
    REQUIRE(cuCtxSetCurrent(nullptr) == CUDA_SUCCESS);
    CUcontext none = nullptr;
    REQUIRE(cuCtxGetCurrent(&none) == CUDA_SUCCESS);
    if (none == nullptr) {
        CUdeviceptr p = 0;
        CHECK(cuMemAlloc(&p, 256) == CUDA_ERROR_INVALID_CONTEXT);
    }
    PrimaryContext primary;
    CUdeviceptr p = 0;
    CHECK(cuMemAlloc(&p, 0) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemAlloc(nullptr, 256) == CUDA_ERROR_INVALID_VALUE);
}
