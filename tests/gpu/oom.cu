// A real out-of-memory: ask for more than the H200 has, then fill most of it and ask
// again, so both "more than the device has" and a plain capacity failure are recorded.
#include <cstdio>
#include <cuda_runtime.h>
#include <vector>

int main() {
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, size_t{512} << 30); // 512 GiB
    std::printf("512 GiB: %s\n", cudaGetErrorName(e));
    cudaGetLastError();
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    std::vector<void*> held;
    size_t chunk = size_t{8} << 30;
    while (cudaMalloc(&p, chunk) == cudaSuccess) {
        held.push_back(p);
    }
    cudaGetLastError();
    std::printf("held %zu chunks of 8 GiB of %zu total\n", held.size(), total);
    for (void* q : held) {
        cudaFree(q);
    }
    return 0;
}
