// Device ordinal attribution: allocate on device 0, try a device that does not exist
// (with one GPU), and allocate again: the failed cudaSetDevice must not confuse it.
#include <cstdio>
#include <cuda_runtime.h>

int main() {
    int count = 0;
    cudaGetDeviceCount(&count);
    void *a = nullptr, *b = nullptr;
    cudaSetDevice(0);
    cudaMalloc(&a, 41001);
    cudaError_t e = cudaSetDevice(count); // out of range
    std::printf("devices=%d set_device(%d)=%s\n", count, count, cudaGetErrorName(e));
    cudaGetLastError();
    cudaMalloc(&b, 42001);
    if (count > 1) {
        cudaSetDevice(1);
        void* c = nullptr;
        cudaMalloc(&c, 43001);
        cudaFree(c);
        cudaSetDevice(0);
    }
    cudaFree(a);
    cudaFree(b);
    return 0;
}
