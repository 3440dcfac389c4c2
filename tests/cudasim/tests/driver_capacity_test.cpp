// Capacity from CUDASIM_MEMORY_BYTES, out-of-memory, and cuMemGetInfo's agreement with both.
#include "driver_test_support.h"

#include <vector>

using namespace cudasim_test;

TEST_CASE("capacity comes from CUDASIM_MEMORY_BYTES", "[capacity]") {
    PrimaryContext primary;
    size_t free = 0;
    size_t total = 0;
    REQUIRE(cuMemGetInfo(&free, &total) == CUDA_SUCCESS);
    CHECK(total == configured_capacity());
    size_t device_total = 0;
    REQUIRE(cuDeviceTotalMem(&device_total, 0) == CUDA_SUCCESS);
    CHECK(device_total == total);
}

TEST_CASE("allocating past capacity fails with out of memory", "[capacity]") {
    PrimaryContext primary;
    const uint64_t capacity = configured_capacity();
    REQUIRE(capacity % (64 * kMiB) == 0); // the ctest environment uses whole 64 MiB steps
    const uint64_t chunk = capacity / 4;
    const uint64_t free_before = free_bytes();
    REQUIRE(free_before == capacity);

    std::vector<CUdeviceptr> chunks(4);
    for (auto& p : chunks) {
        REQUIRE(cuMemAlloc(&p, chunk) == CUDA_SUCCESS);
    }
    CHECK(free_bytes() == 0);

    CUdeviceptr untouched = 0xdeadbeef;
    CHECK(cuMemAlloc(&untouched, chunk) == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(cuMemAlloc(&untouched, 1) == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(cuMemAllocManaged(&untouched, 1, CU_MEM_ATTACH_GLOBAL) == CUDA_ERROR_OUT_OF_MEMORY);
    size_t pitch = 77;
    CHECK(cuMemAllocPitch(&untouched, &pitch, 512, 4, 4) == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(untouched == 0xdeadbeef); // out-parameters untouched on failure
    CHECK(pitch == 77);

    // Pinned host memory is not device memory: it still works.
    void* host = nullptr;
    REQUIRE(cuMemAllocHost(&host, 64 * kMiB) == CUDA_SUCCESS);
    CHECK(cuMemFreeHost(host) == CUDA_SUCCESS);

    // One chunk back: exactly that much is free, and one byte more than fits does not.
    REQUIRE(cuMemFree(chunks[0]) == CUDA_SUCCESS);
    CHECK(free_bytes() == chunk);
    CHECK(cuMemAlloc(&untouched, chunk + 1) == CUDA_ERROR_OUT_OF_MEMORY);
    REQUIRE(cuMemAlloc(&chunks[0], chunk) == CUDA_SUCCESS);

    for (CUdeviceptr p : chunks) {
        CHECK(cuMemFree(p) == CUDA_SUCCESS);
    }
    CHECK(free_bytes() == free_before);
}

TEST_CASE("arrays and managed memory count against capacity", "[capacity]") {
    PrimaryContext primary;
    const uint64_t capacity = configured_capacity();
    CUdeviceptr managed = 0;
    REQUIRE(cuMemAllocManaged(&managed, capacity - kGranule, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
    CHECK(free_bytes() == kGranule);

    CUDA_ARRAY_DESCRIPTOR too_big{};
    too_big.Width = kGranule + 1;
    too_big.Height = 1;
    too_big.Format = CU_AD_FORMAT_UNSIGNED_INT8;
    too_big.NumChannels = 1;
    CUarray array = nullptr;
    CHECK(cuArrayCreate(&array, &too_big) == CUDA_ERROR_OUT_OF_MEMORY);
    too_big.Width = kGranule;
    REQUIRE(cuArrayCreate(&array, &too_big) == CUDA_SUCCESS);
    CHECK(free_bytes() == 0);

    CHECK(cuArrayDestroy(array) == CUDA_SUCCESS);
    CHECK(cuMemFree(managed) == CUDA_SUCCESS);
    CHECK(free_bytes() == capacity);
}

// Run by ctest with a malformed CUDASIM_MEMORY_BYTES (hidden from the default run).
TEST_CASE("a malformed capacity falls back to the 80 GiB default", "[.][env-malformed]") {
    PrimaryContext primary;
    size_t free = 0;
    size_t total = 0;
    REQUIRE(cuMemGetInfo(&free, &total) == CUDA_SUCCESS);
    CHECK(total == 80ull << 30);
}

// Run by ctest with CUDASIM_DEVICES=0.
TEST_CASE("no devices: cuInit reports CUDA_ERROR_NO_DEVICE", "[.][env-no-device]") {
    CHECK(cuInit(0) == CUDA_ERROR_NO_DEVICE);
    int count = -1;
    CHECK(cuDeviceGetCount(&count) == CUDA_ERROR_NOT_INITIALIZED);
}
