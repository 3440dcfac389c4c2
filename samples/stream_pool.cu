// stream_pool: stream-ordered allocation from the default pool and from an explicit pool.
//
// cudaFreeAsync returns memory to its pool, not to the device: the pool keeps it reserved until
// a synchronization finds it above the pool's release threshold. One allocation, 11001 bytes
// from the default pool, is never freed.
#include "check.h"

#include <cstdint>

__global__ void fill(char* data, size_t n, char value) {
    size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    if (i < n) {
        data[i] = value;
    }
}

static void print_pool(const char* name, cudaMemPool_t pool) {
    uint64_t reserved = 0;
    uint64_t used = 0;
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
    std::printf("stream_pool: %s pool: %llu bytes reserved, %llu used\n", name,
                static_cast<unsigned long long>(reserved), static_cast<unsigned long long>(used));
}

int main() {
    print_device("stream_pool");
    cudaStream_t stream = nullptr;
    CHECK(cudaStreamCreate(&stream));

    // Default pool of device 0.
    cudaMemPool_t default_pool = nullptr;
    CHECK(cudaDeviceGetDefaultMemPool(&default_pool, 0));
    char* frame = nullptr;
    char* leaked = nullptr;
    CHECK(cudaMallocAsync(&frame, 1234567, stream));
    CHECK(cudaMallocAsync(&leaked, 11001, stream));
    fill<<<(1234567 + 255) / 256, 256, 0, stream>>>(frame, 1234567, 1);
    CHECK(cudaGetLastError());
    CHECK(cudaFreeAsync(frame, stream));
    print_pool("default (after free)", default_pool);
    CHECK(cudaStreamSynchronize(stream));
    print_pool("default (after synchronize)", default_pool);

    // An explicit pool that keeps up to 64 MiB reserved across synchronizations.
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool = nullptr;
    CHECK(cudaMemPoolCreate(&pool, &props));
    uint64_t threshold = 64ull << 20;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
    char* batch = nullptr;
    CHECK(cudaMallocFromPoolAsync(&batch, 7654321, pool, stream));
    fill<<<(7654321 + 255) / 256, 256, 0, stream>>>(batch, 7654321, 2);
    CHECK(cudaGetLastError());
    CHECK(cudaFreeAsync(batch, stream));
    CHECK(cudaStreamSynchronize(stream));
    print_pool("explicit (after synchronize)", pool);
    CHECK(cudaMemPoolTrimTo(pool, 0));
    print_pool("explicit (after trim)", pool);
    CHECK(cudaMemPoolDestroy(pool));

    CHECK(cudaStreamDestroy(stream));
    std::printf("stream_pool: leaked 1 allocation of 11001 bytes from the default pool\n");
    return 0;
}
