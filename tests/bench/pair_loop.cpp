// The whole-process workload of scripts/bench-recorder.sh: PAIRS allocate/free pairs from
// one call site at the bottom of RECURSION frames of recursion, so every captured stack has
// the same, known depth (RECURSION + the loop, main and the C start-up frames: about 18 for
// the default of 12). "cuda" makes cudaMalloc/cudaFree pairs (the tracer's hot path, on
// whatever libcudart.so the loader finds), "malloc" makes malloc/free pairs of the same shape
// for heaptrack. Nothing else runs: the process's whole cost is start-up plus the loop, which
// is what the marginal method (two sizes, subtract) needs.
//
//   pair_loop cuda|malloc PAIRS [RECURSION=12]
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// 1 MiB: a tensor-sized device allocation. 64 bytes: glibc's fast path, so the malloc
// baseline is the allocator's best case and heaptrack's share is not hidden.
constexpr size_t kDeviceBytes = size_t{1} << 20;
constexpr size_t kHostBytes = 64;

__attribute__((noinline)) int cudaPairs(long pairs) {
    for (long i = 0; i < pairs; ++i) {
        void* p = nullptr;
        if (cudaMalloc(&p, kDeviceBytes) != cudaSuccess || cudaFree(p) != cudaSuccess) {
            return 1;
        }
    }
    return 0;
}

__attribute__((noinline)) int mallocPairs(long pairs) {
    for (long i = 0; i < pairs; ++i) {
        void* p = std::malloc(kHostBytes);
        // Keeps the compiler from removing the pair.
        asm volatile("" : : "r"(p) : "memory");
        std::free(p);
    }
    return 0;
}

// The empty asm after the call keeps it from being a tail call, which would flatten the
// recursion into a loop.
__attribute__((noinline)) int recurse(int depth, bool cuda, long pairs) {
    if (depth > 0) {
        int r = recurse(depth - 1, cuda, pairs);
        asm volatile("" ::: "memory");
        return r;
    }
    return cuda ? cudaPairs(pairs) : mallocPairs(pairs);
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3 || (std::strcmp(argv[1], "cuda") != 0 && std::strcmp(argv[1], "malloc") != 0)) {
        std::fprintf(stderr, "usage: %s cuda|malloc PAIRS [RECURSION=12]\n", argv[0]);
        return 2;
    }
    bool cuda = std::strcmp(argv[1], "cuda") == 0;
    long pairs = std::atol(argv[2]);
    int depth = argc > 3 ? std::atoi(argv[3]) : 12;
    if (pairs < 0 || depth < 0) {
        return 2;
    }
    int r = recurse(depth, cuda, pairs);
    if (r != 0) {
        std::fprintf(stderr, "cudaMalloc/cudaFree failed\n");
    }
    return r;
}
