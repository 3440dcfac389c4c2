// Managed, pinned host and array memory: what is real, what counts against the device.
#include "driver_test_support.h"

#include <cstring>
#include <vector>

using namespace cudasim_test;

TEST_CASE("managed memory is real host-accessible memory charged to the device", "[kinds]") {
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();

    CUdeviceptr small = 0;
    REQUIRE(cuMemAllocManaged(&small, 11001, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
    CUdeviceptr large = 0;
    REQUIRE(cuMemAllocManaged(&large, 5 * kMiB, CU_MEM_ATTACH_GLOBAL) == CUDA_SUCCESS);
    CHECK(used_bytes() - used_before == kGranule + 6 * kMiB);

    std::memset(reinterpret_cast<void*>(small), 0x5a, 11001);
    std::memset(reinterpret_cast<void*>(large), 0xa5, 5 * kMiB);
    CHECK(reinterpret_cast<unsigned char*>(small)[11000] == 0x5a);
    CHECK(reinterpret_cast<unsigned char*>(large)[5 * kMiB - 1] == 0xa5);

    int managed = 0;
    REQUIRE(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, small) ==
            CUDA_SUCCESS);
    CHECK(managed == 1);
    void* host = nullptr;
    REQUIRE(cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER, small) == CUDA_SUCCESS);
    CHECK(host == reinterpret_cast<void*>(small));

    // Managed and device memory never share a granule.
    CUdeviceptr device = 0;
    REQUIRE(cuMemAlloc(&device, 256) == CUDA_SUCCESS);
    CHECK(granule_of(device) != granule_of(small));

    CHECK(cuMemFree(device) == CUDA_SUCCESS);
    CHECK(cuMemFree(small) == CUDA_SUCCESS);
    CHECK(cuMemFree(large) == CUDA_SUCCESS);
    CHECK(used_bytes() == used_before);

    CHECK(cuMemAllocManaged(&small, 256, 0) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("pinned host memory is real and not charged to the device", "[kinds]") {
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();

    void* pinned = nullptr;
    REQUIRE(cuMemAllocHost(&pinned, 11001) == CUDA_SUCCESS);
    void* mapped = nullptr;
    REQUIRE(cuMemHostAlloc(&mapped, 1234567, CU_MEMHOSTALLOC_DEVICEMAP) == CUDA_SUCCESS);
    std::memset(pinned, 1, 11001);
    std::memset(mapped, 2, 1234567);
    CHECK(used_bytes() == used_before);

    unsigned type = 0;
    REQUIRE(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                  reinterpret_cast<CUdeviceptr>(mapped) + 100) == CUDA_SUCCESS);
    CHECK(type == CU_MEMORYTYPE_HOST);
    CUdeviceptr device_view = 0;
    REQUIRE(cuMemHostGetDevicePointer(&device_view, mapped, 0) == CUDA_SUCCESS);
    CHECK(device_view == reinterpret_cast<CUdeviceptr>(mapped));
    unsigned flags = 0;
    REQUIRE(cuMemHostGetFlags(&flags, mapped) == CUDA_SUCCESS);
    CHECK(flags == CU_MEMHOSTALLOC_DEVICEMAP);

    CHECK(cuMemFreeHost(pinned) == CUDA_SUCCESS);
    CHECK(cuMemFreeHost(mapped) == CUDA_SUCCESS);
}

TEST_CASE("registered host memory", "[kinds]") {
    PrimaryContext primary;
    std::vector<char> buffer(1 << 20);
    REQUIRE(cuMemHostRegister(buffer.data(), buffer.size(), 0) == CUDA_SUCCESS);
    CHECK(cuMemHostRegister(buffer.data() + 4096, 4096, 0) ==
          CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
    CHECK(cuMemFreeHost(buffer.data()) == CUDA_ERROR_INVALID_VALUE); // not ours to free
    CHECK(cuMemHostUnregister(buffer.data()) == CUDA_SUCCESS);
    CHECK(cuMemHostUnregister(buffer.data()) == CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED);
    buffer[0] = 1; // still the program's memory
}

TEST_CASE("arrays charge the bytes of their descriptor", "[kinds]") {
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();

    CUDA_ARRAY_DESCRIPTOR flat{};
    flat.Width = 1000;
    flat.Height = 1000;
    flat.Format = CU_AD_FORMAT_FLOAT;
    flat.NumChannels = 1;
    CUarray a2d = nullptr;
    REQUIRE(cuArrayCreate(&a2d, &flat) == CUDA_SUCCESS);
    CHECK(used_bytes() - used_before == 4 * kMiB); // 4,000,000 bytes in two granules

    CUDA_ARRAY3D_DESCRIPTOR volume{};
    volume.Width = 64;
    volume.Height = 64;
    volume.Depth = 64;
    volume.Format = CU_AD_FORMAT_UNSIGNED_INT8;
    volume.NumChannels = 4;
    CUarray a3d = nullptr;
    REQUIRE(cuArray3DCreate(&a3d, &volume) == CUDA_SUCCESS);
    CHECK(used_bytes() - used_before == 4 * kMiB + 2 * kMiB); // 1 MiB: a small block

    CUDA_ARRAY3D_DESCRIPTOR texture{};
    texture.Width = 2048;
    texture.Height = 2048;
    texture.Format = CU_AD_FORMAT_UNSIGNED_INT8;
    texture.NumChannels = 1;
    CUmipmappedArray mipmapped = nullptr;
    // 4 MiB + 1 MiB + 256 KiB: every level counts.
    REQUIRE(cuMipmappedArrayCreate(&mipmapped, &texture, 3) == CUDA_SUCCESS);
    CHECK(used_bytes() - used_before == 4 * kMiB + 2 * kMiB + 6 * kMiB);

    CUDA_ARRAY3D_DESCRIPTOR back{};
    REQUIRE(cuArray3DGetDescriptor(&back, a3d) == CUDA_SUCCESS);
    CHECK(back.Depth == 64);

    CHECK(cuArrayDestroy(a2d) == CUDA_SUCCESS);
    CHECK(cuArrayDestroy(a3d) == CUDA_SUCCESS);
    CHECK(cuMipmappedArrayDestroy(mipmapped) == CUDA_SUCCESS);
    CHECK(used_bytes() == used_before);
    CHECK(cuArrayDestroy(a2d) == CUDA_ERROR_INVALID_HANDLE);

    flat.Format = CU_AD_FORMAT_FLOAT;
    flat.NumChannels = 3;
    CHECK(cuArrayCreate(&a2d, &flat) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("pointer attributes describe device allocations", "[kinds]") {
    PrimaryContext primary;
    CUdeviceptr p = 0;
    REQUIRE(cuMemAlloc(&p, 1234567) == CUDA_SUCCESS);

    unsigned type = 0;
    REQUIRE(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p + 10) == CUDA_SUCCESS);
    CHECK(type == CU_MEMORYTYPE_DEVICE);
    CUcontext ctx = nullptr;
    REQUIRE(cuPointerGetAttribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, p) == CUDA_SUCCESS);
    CHECK(ctx == primary.ctx);
    CUdeviceptr start = 0;
    REQUIRE(cuPointerGetAttribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, p + 1000) ==
            CUDA_SUCCESS);
    CHECK(start == p);
    size_t size = 0;
    REQUIRE(cuPointerGetAttribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, p + 1000) ==
            CUDA_SUCCESS);
    CHECK(size == 1234567);
    void* host = nullptr;
    CHECK(cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER, p) ==
          CUDA_ERROR_INVALID_VALUE);

    int on_stack = 0;
    CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                reinterpret_cast<CUdeviceptr>(&on_stack)) ==
          CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemFree(p) == CUDA_SUCCESS);
    CHECK(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) ==
          CUDA_ERROR_INVALID_VALUE);
}
