// Stream-ordered allocation: the default pool, explicit pools, attributes, release and trim.
#include "driver_test_support.h"

using namespace cudasim_test;

// Pools grow in 32 MiB steps and count requested bytes as used (both measured on an H200).
constexpr uint64_t kPoolStep = 32 * kMiB;

// cuda.h declares the per-thread-stream flavours only for per-thread builds.
extern "C" CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize,
                                                 CUstream hStream);
extern "C" CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream);

namespace {

uint64_t pool_attribute(CUmemoryPool pool, CUmemPool_attribute attr) {
    cuuint64_t value = 0;
    REQUIRE(cuMemPoolGetAttribute(pool, attr, &value) == CUDA_SUCCESS);
    return value;
}

CUmemoryPool create_pool(int device, size_t max_size = 0) {
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = device;
    props.maxSize = max_size;
    CUmemoryPool pool = nullptr;
    REQUIRE(cuMemPoolCreate(&pool, &props) == CUDA_SUCCESS);
    return pool;
}

} // namespace

TEST_CASE("freed pool memory stays reserved until a synchronize", "[pool]") {
    PrimaryContext primary;
    CUmemoryPool pool = nullptr;
    REQUIRE(cuDeviceGetDefaultMemPool(&pool, 0) == CUDA_SUCCESS);
    CUmemoryPool current = nullptr;
    REQUIRE(cuDeviceGetMemPool(&current, 0) == CUDA_SUCCESS);
    CHECK(current == pool);
    const uint64_t used_before = used_bytes();

    CUdeviceptr p = 0;
    REQUIRE(cuMemAllocAsync(&p, kMiB, nullptr) == CUDA_SUCCESS);
    CHECK(pool_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == kPoolStep);
    CHECK(pool_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == kMiB);
    CHECK(used_bytes() - used_before == kPoolStep);
    CUdeviceptr q = 0;
    REQUIRE(cuMemAllocAsync(&q, 11001, nullptr) == CUDA_SUCCESS);
    CHECK(pool_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == kMiB + 11001);
    REQUIRE(cuMemFreeAsync(q, nullptr) == CUDA_SUCCESS);
    CUmemoryPool owner = nullptr;
    REQUIRE(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, p) == CUDA_SUCCESS);
    CHECK(owner == pool);

    REQUIRE(cuMemFreeAsync(p, nullptr) == CUDA_SUCCESS);
    CHECK(pool_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 0);
    CHECK(pool_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == kPoolStep);
    CHECK(used_bytes() - used_before == kPoolStep); // still held by the pool

    // Reuse without a synchronize: the freed block is the first candidate.
    CUdeviceptr again = 0;
    REQUIRE(cuMemAllocAsync(&again, kMiB, nullptr) == CUDA_SUCCESS);
    CHECK(again == p);
    REQUIRE(cuMemFreeAsync(again, nullptr) == CUDA_SUCCESS);

    REQUIRE(cuStreamSynchronize(nullptr) == CUDA_SUCCESS);
    CHECK(pool_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 0);
    CHECK(pool_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == kPoolStep);
    CHECK(pool_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == kMiB + 11001);
    CHECK(used_bytes() == used_before);

    cuuint64_t reset = 0;
    REQUIRE(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &reset) == CUDA_SUCCESS);
    REQUIRE(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &reset) == CUDA_SUCCESS);
    CHECK(pool_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH) == 0);
    CHECK(pool_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH) == 0);
    cuuint64_t not_zero = 5;
    CHECK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &not_zero) ==
          CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("the release threshold keeps memory through synchronizes; trim releases it", "[pool]") {
    PrimaryContext primary;
    CUmemoryPool pool = nullptr;
    REQUIRE(cuDeviceGetDefaultMemPool(&pool, 0) == CUDA_SUCCESS);
    cuuint64_t threshold = 64 * kMiB;
    REQUIRE(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold) ==
            CUDA_SUCCESS);
    CHECK(pool_attribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD) == 64 * kMiB);
    const uint64_t used_before = used_bytes();

    // A 40 MiB allocation after a 1 MiB one grows the pool in place and straddles its two
    // 32 MiB steps, as on an H200.
    CUdeviceptr a = 0;
    CUdeviceptr b = 0;
    REQUIRE(cuMemAllocAsync(&a, kMiB, nullptr) == CUDA_SUCCESS);
    REQUIRE(cuMemAllocAsync(&b, 40 * kMiB, nullptr) == CUDA_SUCCESS);
    CHECK(b == a + kMiB);
    CHECK(pool_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 2 * kPoolStep);
    REQUIRE(cuMemFreeAsync(a, nullptr) == CUDA_SUCCESS);
    REQUIRE(cuMemFreeAsync(b, nullptr) == CUDA_SUCCESS);
    REQUIRE(cuCtxSynchronize() == CUDA_SUCCESS);
    CHECK(pool_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 2 * kPoolStep);
    CHECK(used_bytes() - used_before == 2 * kPoolStep);

    REQUIRE(cuMemPoolTrimTo(pool, kPoolStep) == CUDA_SUCCESS);
    CHECK(pool_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) <= kPoolStep);
    REQUIRE(cuMemPoolTrimTo(pool, 0) == CUDA_SUCCESS);
    CHECK(pool_attribute(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT) == 0);
    CHECK(used_bytes() == used_before);

    threshold = 0;
    REQUIRE(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold) ==
            CUDA_SUCCESS);
}

TEST_CASE("explicit pools: allocation, current pool, deferred destruction", "[pool]") {
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();
    CUmemoryPool pool = create_pool(0);

    CUstream stream = nullptr;
    REQUIRE(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
    CUdeviceptr p = 0;
    REQUIRE(cuMemAllocFromPoolAsync(&p, 11001, pool, stream) == CUDA_SUCCESS);
    CHECK(pool_attribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT) == 11001);

    // Made current, the pool serves plain cuMemAllocAsync.
    REQUIRE(cuDeviceSetMemPool(0, pool) == CUDA_SUCCESS);
    CUdeviceptr q = 0;
    REQUIRE(cuMemAllocAsync_ptsz(&q, 256, stream) == CUDA_SUCCESS);
    CUmemoryPool owner = nullptr;
    REQUIRE(cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE, q) == CUDA_SUCCESS);
    CHECK(owner == pool);
    REQUIRE(cuMemFreeAsync_ptsz(q, stream) == CUDA_SUCCESS);

    // Destroyed with an allocation outstanding: the memory stays until that one is freed.
    REQUIRE(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
    CUmemoryPool current = nullptr;
    REQUIRE(cuDeviceGetMemPool(&current, 0) == CUDA_SUCCESS);
    CUmemoryPool default_pool = nullptr;
    REQUIRE(cuDeviceGetDefaultMemPool(&default_pool, 0) == CUDA_SUCCESS);
    CHECK(current == default_pool);
    CHECK(used_bytes() - used_before == kPoolStep);
    REQUIRE(cuMemFreeAsync(p, stream) == CUDA_SUCCESS);
    CHECK(used_bytes() == used_before);

    CHECK(cuMemPoolDestroy(default_pool) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuStreamDestroy(stream) == CUDA_SUCCESS);
}

// Below one 32 MiB step, a pool reserves only what it needs.
TEST_CASE("a pool's maximum size limits its reservations", "[pool]") {
    PrimaryContext primary;
    CUmemoryPool pool = create_pool(0, 4 * kMiB);
    CUdeviceptr p = 0xdeadbeef;
    CHECK(cuMemAllocFromPoolAsync(&p, 6 * kMiB, pool, nullptr) == CUDA_ERROR_OUT_OF_MEMORY);
    CHECK(p == 0xdeadbeef);
    REQUIRE(cuMemAllocFromPoolAsync(&p, 4 * kMiB, pool, nullptr) == CUDA_SUCCESS);
    CHECK(cuMemFreeAsync(p, nullptr) == CUDA_SUCCESS);
    CHECK(cuMemPoolDestroy(pool) == CUDA_SUCCESS);
}

TEST_CASE("pool memory can be freed with cuMemFree and survives context teardown", "[pool]") {
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();
    CUdeviceptr p = 0;
    REQUIRE(cuMemAllocAsync(&p, 1234567, nullptr) == CUDA_SUCCESS);
    REQUIRE(cuDevicePrimaryCtxReset(0) == CUDA_SUCCESS);
    REQUIRE(cuDevicePrimaryCtxRetain(&primary.ctx, 0) == CUDA_SUCCESS); // back to life
    CHECK(used_bytes() - used_before == kPoolStep);                     // not the context's to free
    REQUIRE(cuMemFree(p) == CUDA_SUCCESS);
    REQUIRE(cuStreamSynchronize(nullptr) == CUDA_SUCCESS);
    CHECK(used_bytes() == used_before);
    REQUIRE(cuDevicePrimaryCtxRelease(0) == CUDA_SUCCESS);
}

TEST_CASE("pool arguments are checked", "[pool]") {
    PrimaryContext primary;
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 7;
    CUmemoryPool pool = nullptr;
    CHECK(cuMemPoolCreate(&pool, &props) == CUDA_ERROR_INVALID_VALUE);
    CUdeviceptr p = 0;
    CHECK(cuMemAllocAsync(&p, 0, nullptr) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemFreeAsync(0x1234, nullptr) == CUDA_ERROR_INVALID_VALUE);
}
