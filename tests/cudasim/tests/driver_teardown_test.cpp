// What context teardown frees: everything the context owned except VMM and pool memory.
#include "driver_test_support.h"

#include <vector>

using namespace cudasim_test;

TEST_CASE("resetting the primary context frees what it owned", "[teardown]") {
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();

    CUdeviceptr device = 0;
    REQUIRE(cuMemAlloc(&device, 1234567) == CUDA_SUCCESS);
    CUdeviceptr pitched = 0;
    size_t pitch = 0;
    REQUIRE(cuMemAllocPitch(&pitched, &pitch, 3000, 1000, 4) == CUDA_SUCCESS);
    CUdeviceptr managed = 0;
    REQUIRE(cuMemAllocManaged(&managed, 11001, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
    CUDA_ARRAY_DESCRIPTOR desc{};
    desc.Width = 4096;
    desc.Height = 1024;
    desc.Format = CU_AD_FORMAT_FLOAT;
    desc.NumChannels = 1;
    CUarray array = nullptr;
    REQUIRE(cuArrayCreate(&array, &desc) == CUDA_SUCCESS);
    void* pinned = nullptr;
    REQUIRE(cuMemAllocHost(&pinned, 11001) == CUDA_SUCCESS);
    std::vector<char> registered(8192);
    REQUIRE(cuMemHostRegister(registered.data(), registered.size(), 0) == CUDA_SUCCESS);

    // Process-wide memory that teardown must leave alone.
    CUdeviceptr pooled = 0;
    REQUIRE(cuMemAllocAsync(&pooled, 3 * kMiB, nullptr) == CUDA_SUCCESS);
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    CUmemGenericAllocationHandle handle = 0;
    REQUIRE(cuMemCreate(&handle, 2 * kMiB, &prop, 0) == CUDA_SUCCESS);
    const uint64_t survivors = 32 * kMiB + 2 * kMiB; // one pool step and the VMM handle

    REQUIRE(cuDevicePrimaryCtxReset(0) == CUDA_SUCCESS);
    // The context stays current but is gone until retained again (as on an H200).
    unsigned flags = 0;
    int active = 1;
    REQUIRE(cuDevicePrimaryCtxGetState(0, &flags, &active) == CUDA_SUCCESS);
    CHECK(active == 0);
    CHECK(cuMemAlloc(&device, 256) == CUDA_ERROR_CONTEXT_IS_DESTROYED);
    CUcontext again = nullptr;
    REQUIRE(cuDevicePrimaryCtxRetain(&again, 0) == CUDA_SUCCESS);
    CHECK(again == primary.ctx); // same handle
    CHECK(used_bytes() - used_before == survivors);

    CHECK(cuMemFree(device) == CUDA_ERROR_INVALID_VALUE); // already gone
    CHECK(cuMemFree(managed) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuArrayDestroy(array) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(cuMemFreeHost(pinned) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemHostUnregister(registered.data()) == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);

    CHECK(cuMemFreeAsync(pooled, nullptr) == CUDA_SUCCESS);
    CHECK(cuStreamSynchronize(nullptr) == CUDA_SUCCESS);
    CHECK(cuMemRelease(handle) == CUDA_SUCCESS);
    CHECK(used_bytes() == used_before);

    REQUIRE(cuMemAlloc(&device, 256) == CUDA_SUCCESS);
    CHECK(cuMemFree(device) == CUDA_SUCCESS);
    REQUIRE(cuDevicePrimaryCtxRelease(0) == CUDA_SUCCESS);
}

TEST_CASE("destroying a created context frees what it owned", "[teardown]") {
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();

    CUcontext created = nullptr;
    REQUIRE(cuCtxCreate(&created, nullptr, 0, 0) == CUDA_SUCCESS);
    CUcontext current = nullptr;
    REQUIRE(cuCtxGetCurrent(&current) == CUDA_SUCCESS);
    CHECK(current == created); // cuCtxCreate pushes the new context

    CUdeviceptr in_created = 0;
    REQUIRE(cuMemAlloc(&in_created, 5 * kMiB) == CUDA_SUCCESS);
    CUcontext owner = nullptr;
    REQUIRE(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, in_created) ==
            CUDA_SUCCESS);
    CHECK(owner == created);
    CHECK(used_bytes() - used_before == 6 * kMiB);

    REQUIRE(cuCtxDestroy(created) == CUDA_SUCCESS);
    REQUIRE(cuCtxGetCurrent(&current) == CUDA_SUCCESS);
    CHECK(current == primary.ctx); // popped off this thread's stack
    CHECK(used_bytes() == used_before);
    CHECK(cuCtxSetCurrent(created) == CUDA_ERROR_CONTEXT_IS_DESTROYED);
    CHECK(cuCtxDestroy(created) == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(cuCtxDestroy(primary.ctx) == CUDA_ERROR_INVALID_CONTEXT);
}

TEST_CASE("the last release of a primary context tears it down", "[teardown]") {
    REQUIRE(cuInit(0) == CUDA_SUCCESS);
    int count = 0;
    REQUIRE(cuDeviceGetCount(&count) == CUDA_SUCCESS);
    REQUIRE(count >= 2);
    const int device = 1; // no other test keeps this one retained
    CUcontext ctx = nullptr;
    REQUIRE(cuDevicePrimaryCtxRetain(&ctx, device) == CUDA_SUCCESS);
    REQUIRE(cuCtxPushCurrent(ctx) == CUDA_SUCCESS);
    const uint64_t used_before = used_bytes();
    CUdeviceptr p = 0;
    REQUIRE(cuMemAlloc(&p, 7 * kMiB) == CUDA_SUCCESS);
    REQUIRE(cuDevicePrimaryCtxRelease(device) == CUDA_SUCCESS);

    unsigned flags = 0;
    int active = 1;
    REQUIRE(cuDevicePrimaryCtxGetState(device, &flags, &active) == CUDA_SUCCESS);
    CHECK(active == 0);
    CHECK(cuMemAlloc(&p, 256) == CUDA_ERROR_CONTEXT_IS_DESTROYED);
    CHECK(cuDevicePrimaryCtxRelease(device) == CUDA_ERROR_INVALID_CONTEXT);

    REQUIRE(cuDevicePrimaryCtxRetain(&ctx, device) == CUDA_SUCCESS);
    CHECK(used_bytes() == used_before);
    CUcontext popped = nullptr;
    REQUIRE(cuCtxPopCurrent(&popped) == CUDA_SUCCESS);
    CHECK(popped == ctx);
    REQUIRE(cuDevicePrimaryCtxRelease(device) == CUDA_SUCCESS);
}
