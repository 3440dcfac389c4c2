// What caching allocators and CUDA libraries hold at exit, by design, beside one real leak:
// functions named as the caching allocators' own (the ones the built-in table of
// analyzer/analysis/caching/caching_allocators.cpp recognises) and a cuBLAS-like library allocate
// and keep their memory; leaky_helper() forgets its buffer. `check` must fail for that one only.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

extern "C" int cublasCreate_v2(void** handle);
extern "C" int cublasSgemm_v2(void* handle);

#define NOINLINE __attribute__((noinline))

static void* allocate(size_t bytes) {
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
        std::fprintf(stderr, "cudaMalloc(%zu) failed\n", bytes);
        std::exit(3);
    }
    return p;
}

// CuPy's pool: a Cython method, named by Cython's mangling.
extern "C" NOINLINE void* __pyx_f_4cupy_4cuda_6memory_22SingleDeviceMemoryPool__malloc(size_t n) {
    return allocate(n);
}

namespace tsl {
struct BFCAllocator {
    NOINLINE void* Extend(size_t n) { return allocate(n); }
};
} // namespace tsl

namespace rmm::mr {
struct cuda_memory_resource {};
template <typename Upstream> struct pool_memory_resource {
    NOINLINE void* do_allocate(size_t n) { return allocate(n); }
};
} // namespace rmm::mr

NOINLINE void* leaky_helper() {
    return allocate(1 << 20);
}

// What the allocators keep, reachable until exit.
void* g_kept[8];

int main() {
    void** kept = g_kept;
    kept[0] = __pyx_f_4cupy_4cuda_6memory_22SingleDeviceMemoryPool__malloc(8 << 20);
    tsl::BFCAllocator bfc;
    kept[1] = bfc.Extend(16 << 20);
    rmm::mr::pool_memory_resource<rmm::mr::cuda_memory_resource> pool;
    kept[2] = pool.do_allocate(6 << 20);
    void* handle = nullptr;
    cublasCreate_v2(&handle);
    if (cublasSgemm_v2(handle) != 0) {
        return 3;
    }
    kept[3] = leaky_helper();
    void* freed = allocate(2 << 20);
    cudaFree(freed);
    std::printf("done\n");
    return 0;
}
