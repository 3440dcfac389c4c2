// Runtime API: pinned host memory (cudaMallocHost and cudaHostAlloc -> cuMemHostAlloc,
// cudaFreeHost -> cuMemFreeHost, cudaHostRegister -> cuMemHostRegister_v2).
#include "api_common.h"

using namespace cudasim::rt;

namespace {

cudaError_t host_alloc(void** ptr, size_t size, unsigned flags) {
    CUDASIM_WITH_CONTEXT(api);
    if (ptr == nullptr) {
        return finish(cudaErrorInvalidValue);
    }
    if (size == 0) {
        *ptr = nullptr;
        return cudaSuccess;
    }
    void* host = nullptr;
    CUresult r = api->cuMemHostAlloc(&host, size, flags);
    if (r == CUDA_SUCCESS) {
        *ptr = host;
    }
    return finish(r);
}

} // namespace

cudaError_t cudaMallocHost(void** ptr, size_t size) {
    return host_alloc(ptr, size, cudaHostAllocDefault);
}

cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
    return host_alloc(pHost, size, flags);
}

cudaError_t cudaFreeHost(void* ptr) {
    CUDASIM_WITH_CONTEXT(api);
    if (ptr == nullptr) {
        return cudaSuccess;
    }
    return finish(api->cuMemFreeHost(ptr));
}

cudaError_t cudaHostRegister(void* ptr, size_t size, unsigned int flags) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuMemHostRegister(ptr, size, flags));
}

cudaError_t cudaHostUnregister(void* ptr) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuMemHostUnregister(ptr));
}

cudaError_t cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags) {
    CUDASIM_WITH_CONTEXT(api);
    if (pDevice == nullptr) {
        return finish(cudaErrorInvalidValue);
    }
    CUdeviceptr device = 0;
    CUresult r = api->cuMemHostGetDevicePointer(&device, pHost, flags);
    if (r == CUDA_SUCCESS) {
        *pDevice = reinterpret_cast<void*>(device);
    }
    return finish(r);
}

cudaError_t cudaHostGetFlags(unsigned int* pFlags, void* pHost) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuMemHostGetFlags(pFlags, pHost));
}
