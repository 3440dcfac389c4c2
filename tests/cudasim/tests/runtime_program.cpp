// An ordinary CUDA program, built with g++ against the real CUDA headers. ctest links it twice:
// with the real toolkit's libcudart.so (and runs it with LD_LIBRARY_PATH pointing at the
// simulator, which must then take the real library's place), and with the simulator's
// libcudart_static.a (which must find the simulated libcuda.so.1 through LD_LIBRARY_PATH).
//
// Exit status 0 when everything behaved as on a GPU with CUDASIM_MEMORY_BYTES of memory.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

int failures = 0;

void expect(bool condition, const char* what) {
    if (!condition) {
        std::fprintf(stderr, "FAILED: %s\n", what);
        ++failures;
    }
}

bool ok(cudaError_t error, const char* call) {
    if (error != cudaSuccess) {
        std::fprintf(stderr, "FAILED: %s returned %s\n", call, cudaGetErrorName(error));
        ++failures;
        return false;
    }
    return true;
}

} // namespace

int main() {
    const char* configured = std::getenv("CUDASIM_MEMORY_BYTES");
    if (configured == nullptr) {
        std::fprintf(stderr, "CUDASIM_MEMORY_BYTES must be set\n");
        return 2;
    }
    const size_t capacity = std::strtoull(configured, nullptr, 10);

    cudaDeviceProp prop{};
    if (!ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties")) {
        return 1;
    }
    std::printf("device 0: %s, %zu bytes\n", prop.name, prop.totalGlobalMem);
    // The proof that the simulator, not some real libcudart, answered.
    if (std::strstr(prop.name, "cudasim") == nullptr) {
        std::fprintf(stderr, "FAILED: not running on the simulator (device '%s')\n", prop.name);
        return 1;
    }

    size_t free_before = 0;
    size_t total = 0;
    ok(cudaMemGetInfo(&free_before, &total), "cudaMemGetInfo");
    expect(total == capacity, "cudaMemGetInfo total is CUDASIM_MEMORY_BYTES");

    void* small = nullptr;
    void* large = nullptr;
    void* async = nullptr;
    void* managed = nullptr;
    void* pinned = nullptr;
    ok(cudaMalloc(&small, 11001), "cudaMalloc(11001)");
    ok(cudaMalloc(&large, 1234567 * 8), "cudaMalloc(9876536)");
    ok(cudaMallocAsync(&async, 1234567, nullptr), "cudaMallocAsync");
    ok(cudaMallocManaged(&managed, 4096), "cudaMallocManaged");
    ok(cudaMallocHost(&pinned, 11001), "cudaMallocHost");
    std::memset(managed, 1, 4096);
    std::memset(pinned, 1, 11001);

    size_t free_now = 0;
    ok(cudaMemGetInfo(&free_now, &total), "cudaMemGetInfo");
    // 11001 -> one 2 MiB granule, 9876536 -> 5 granules, managed -> one, and the default
    // pool reserves a 32 MiB step (16 granules) for the async allocation.
    expect(free_before - free_now == (1 + 5 + 1 + 16) * (2u << 20),
           "cudaMemGetInfo counts whole granules and pool steps");

    // More than is left must fail, cleanly, and cudaMemGetInfo must agree it would not fit.
    void* too_much = reinterpret_cast<void*>(0x1);
    cudaError_t oom = cudaMalloc(&too_much, free_now + 1);
    std::printf("cudaMalloc(%zu) with %zu free: %s\n", free_now + 1, free_now,
                cudaGetErrorName(oom));
    expect(oom == cudaErrorMemoryAllocation,
           "allocation past capacity is cudaErrorMemoryAllocation");
    expect(too_much == reinterpret_cast<void*>(0x1), "failed allocation leaves its pointer alone");
    expect(cudaGetLastError() == cudaErrorMemoryAllocation, "the failure is the last error");

    // Filling the device exactly, then one byte more.
    std::vector<void*> fill;
    for (;;) {
        void* p = nullptr;
        if (cudaMalloc(&p, 64u << 20) != cudaSuccess) {
            break;
        }
        fill.push_back(p);
    }
    cudaGetLastError();
    size_t free_full = 1;
    ok(cudaMemGetInfo(&free_full, &total), "cudaMemGetInfo");
    expect(free_full < (64u << 20), "the device is full when 64 MiB no longer fits");
    for (void* p : fill) {
        ok(cudaFree(p), "cudaFree");
    }

    ok(cudaFree(small), "cudaFree(small)");
    ok(cudaFree(large), "cudaFree(large)");
    ok(cudaFreeAsync(async, nullptr), "cudaFreeAsync");
    ok(cudaFree(managed), "cudaFree(managed)");
    ok(cudaFreeHost(pinned), "cudaFreeHost");
    expect(cudaFree(small) == cudaErrorInvalidValue, "double free is cudaErrorInvalidValue");
    cudaGetLastError();
    ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    ok(cudaMemGetInfo(&free_now, &total), "cudaMemGetInfo");
    expect(free_now == free_before, "everything freed comes back");

    std::printf("%s\n", failures == 0 ? "OK" : "FAILED");
    return failures == 0 ? 0 : 1;
}
