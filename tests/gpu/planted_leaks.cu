// Leaks one allocation of each kind with a distinctive size, frees everything else, so
// compute-sanitizer --leak-check full and gpumemtrace can be compared allocation by
// allocation (scripts/gpu-validate.sh).
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            std::printf("%s: %s\n", #call, cudaGetErrorString(e_));                                \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

__global__ void touch(char* p, size_t n) {
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p[i] = 1;
    }
}

int main() {
    void *device = nullptr, *managed = nullptr, *host = nullptr, *pooled = nullptr, *tmp = nullptr;
    CHECK(cudaMalloc(&device, 1234567));               // leaked: device
    CHECK(cudaMallocManaged(&managed, 2345678));       // leaked: managed
    CHECK(cudaMallocHost(&host, 3456789));             // leaked: pinned host
    CHECK(cudaMallocAsync(&pooled, 4567890, nullptr)); // leaked: stream-ordered
    touch<<<(1234567 + 255) / 256, 256>>>(static_cast<char*>(device), 1234567);
    for (int i = 0; i < 10; ++i) {
        CHECK(cudaMalloc(&tmp, 11001 + i));
        CHECK(cudaFree(tmp));
    }
    CHECK(cudaDeviceSynchronize());
    std::printf("device=%p managed=%p host=%p pooled=%p\n", device, managed, host, pooled);
    return 0;
}
