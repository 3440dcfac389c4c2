// Error checking shared by the samples: a failed CUDA call prints where and why, and exits 1.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t check_error_ = (call);                                                         \
        if (check_error_ != cudaSuccess) {                                                         \
            std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call,         \
                         cudaGetErrorName(check_error_), cudaGetErrorString(check_error_));        \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

// Prints which GPU the sample runs on (the simulated one says "cudasim").
inline void print_device(const char* sample) {
    cudaDeviceProp prop{};
    CHECK(cudaGetDeviceProperties(&prop, 0));
    size_t free = 0;
    size_t total = 0;
    CHECK(cudaMemGetInfo(&free, &total));
    std::printf("%s: running on %s, %zu of %zu bytes free\n", sample, prop.name, free, total);
}
