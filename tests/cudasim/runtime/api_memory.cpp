// Runtime API: device and managed memory, and pointer attributes.
//
// Each call is the driver call the real runtime makes (cudaMalloc -> cuMemAlloc_v2,
// cudaMallocPitch -> cuMemAllocPitch_v2, cudaMallocManaged -> cuMemAllocManaged,
// cudaFree -> cuMemFree_v2), through pointers obtained from cuGetProcAddress.
#include "api_common.h"
#include "pointer_allocation.h"

using namespace cudasim::rt;

namespace {

// cudaMallocPitch asks the driver for this access size; any of 4, 8, 16 gives the same pitch.
constexpr unsigned kPitchElementBytes = 4;

} // namespace

cudaError_t cudaMalloc(void** devPtr, size_t size) {
    CUDASIM_WITH_CONTEXT(api);
    return allocate_pointer(devPtr, size,
                            [&](CUdeviceptr* ptr) { return api->cuMemAlloc(ptr, size); });
}

cudaError_t cudaFree(void* devPtr) {
    // cudaFree(NULL) is the classic way to create the context, so the context comes first.
    CUDASIM_WITH_CONTEXT(api);
    if (devPtr == nullptr) {
        return cudaSuccess;
    }
    return finish(api->cuMemFree(reinterpret_cast<CUdeviceptr>(devPtr)));
}

cudaError_t cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height) {
    CUDASIM_WITH_CONTEXT(api);
    if (devPtr == nullptr || pitch == nullptr) {
        return finish(cudaErrorInvalidValue);
    }
    CUdeviceptr ptr = 0;
    size_t driver_pitch = 0;
    CUresult r = api->cuMemAllocPitch(&ptr, &driver_pitch, width, height, kPitchElementBytes);
    if (r == CUDA_SUCCESS) {
        *devPtr = reinterpret_cast<void*>(ptr);
        *pitch = driver_pitch;
    }
    return finish(r);
}

cudaError_t cudaMalloc3D(struct cudaPitchedPtr* pitchedDevPtr, struct cudaExtent extent) {
    CUDASIM_WITH_CONTEXT(api);
    if (pitchedDevPtr == nullptr) {
        return finish(cudaErrorInvalidValue);
    }
    CUdeviceptr ptr = 0;
    size_t pitch = 0;
    CUresult r = api->cuMemAllocPitch(&ptr, &pitch, extent.width, extent.height * extent.depth,
                                      kPitchElementBytes);
    if (r == CUDA_SUCCESS) {
        *pitchedDevPtr =
            cudaPitchedPtr{reinterpret_cast<void*>(ptr), pitch, extent.width, extent.height};
    }
    return finish(r);
}

cudaError_t cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
    CUDASIM_WITH_CONTEXT(api);
    return allocate_pointer(
        devPtr, size, [&](CUdeviceptr* ptr) { return api->cuMemAllocManaged(ptr, size, flags); });
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes* attributes, const void* ptr) {
    CUDASIM_WITH_DRIVER(api);
    if (attributes == nullptr) {
        return finish(cudaErrorInvalidValue);
    }
    auto address = reinterpret_cast<CUdeviceptr>(ptr);
    cudaPointerAttributes result{};
    unsigned int memory_type = 0;
    if (api->cuPointerGetAttribute(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, address) !=
        CUDA_SUCCESS) {
        // Memory CUDA does not know is ordinary host memory, not an error.
        result.type = cudaMemoryTypeUnregistered;
        result.device = cudaInvalidDeviceId;
        result.hostPointer = const_cast<void*>(ptr);
        *attributes = result;
        return cudaSuccess;
    }
    int managed = 0;
    api->cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, address);
    api->cuPointerGetAttribute(&result.device, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, address);
    result.type = managed                             ? cudaMemoryTypeManaged
                  : memory_type == CU_MEMORYTYPE_HOST ? cudaMemoryTypeHost
                                                      : cudaMemoryTypeDevice;
    result.devicePointer = const_cast<void*>(ptr);
    void* host = nullptr;
    if (api->cuPointerGetAttribute(&host, CU_POINTER_ATTRIBUTE_HOST_POINTER, address) ==
        CUDA_SUCCESS) {
        result.hostPointer = host;
    }
    *attributes = result;
    return cudaSuccess;
}
