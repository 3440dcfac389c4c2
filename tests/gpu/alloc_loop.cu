// Allocation-heavy loops for overhead measurements: argv[1] = "async" (cudaMallocAsync /
// cudaFreeAsync on one stream) or "sync" (cudaMalloc / cudaFree), argv[2] = pairs.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

int main(int argc, char** argv) {
    bool async = argc > 1 && std::strcmp(argv[1], "async") == 0;
    long pairs = argc > 2 ? std::atol(argv[2]) : 100000;
    cudaStream_t s;
    cudaStreamCreate(&s);
    void* p = nullptr;
    cudaMalloc(&p, 1); // context creation out of the timed part
    cudaFree(p);
    auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < pairs; ++i) {
        cudaError_t a = async ? cudaMallocAsync(&p, 4096, s) : cudaMalloc(&p, 4096);
        cudaError_t f = async ? cudaFreeAsync(p, s) : cudaFree(p);
        if (a != cudaSuccess || f != cudaSuccess) {
            // A loop of failing calls would time nothing worth knowing.
            std::fprintf(stderr, "pair %ld failed: %s / %s\n", i, cudaGetErrorName(a),
                         cudaGetErrorName(f));
            return 1;
        }
    }
    cudaStreamSynchronize(s);
    double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    std::printf("{\"mode\":\"%s\",\"pairs\":%ld,\"ns_per_pair\":%.1f}\n", async ? "async" : "sync",
                pairs, ns / pairs);
    return 0;
}
