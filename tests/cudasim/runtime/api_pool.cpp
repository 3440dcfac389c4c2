// Runtime API: stream-ordered allocation and memory pools (cudaMallocAsync -> cuMemAllocAsync,
// cudaFreeAsync -> cuMemFreeAsync, ...). The _ptsz exports are what a program built with
// per-thread default streams calls; they reach the driver's _ptsz functions.
#include "api_common.h"
#include "pointer_allocation.h"

using namespace cudasim::rt;

namespace {

cudaError_t malloc_async(void** devPtr, size_t size, cudaMemPool_t pool, cudaStream_t stream,
                         bool per_thread) {
    CUDASIM_WITH_CONTEXT(api);
    return allocate_pointer(devPtr, size, [&](CUdeviceptr* ptr) {
        if (pool == nullptr) {
            auto allocate = per_thread ? api->cuMemAllocAsync_ptsz : api->cuMemAllocAsync;
            return allocate(ptr, size, stream);
        }
        auto allocate =
            per_thread ? api->cuMemAllocFromPoolAsync_ptsz : api->cuMemAllocFromPoolAsync;
        return allocate(ptr, size, pool, stream);
    });
}

cudaError_t free_async(void* devPtr, cudaStream_t stream, bool per_thread) {
    CUDASIM_WITH_CONTEXT(api);
    if (devPtr == nullptr) {
        return cudaSuccess;
    }
    auto free = per_thread ? api->cuMemFreeAsync_ptsz : api->cuMemFreeAsync;
    return finish(free(reinterpret_cast<CUdeviceptr>(devPtr), stream));
}

} // namespace

cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) {
    return malloc_async(devPtr, size, nullptr, hStream, false);
}

cudaError_t cudaMallocAsync_ptsz(void** devPtr, size_t size, cudaStream_t hStream) {
    return malloc_async(devPtr, size, nullptr, hStream, true);
}

cudaError_t cudaMallocFromPoolAsync(void** ptr, size_t size, cudaMemPool_t memPool,
                                    cudaStream_t stream) {
    if (memPool == nullptr) {
        return finish(cudaErrorInvalidValue);
    }
    return malloc_async(ptr, size, memPool, stream, false);
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void** ptr, size_t size, cudaMemPool_t memPool,
                                         cudaStream_t stream) {
    if (memPool == nullptr) {
        return finish(cudaErrorInvalidValue);
    }
    return malloc_async(ptr, size, memPool, stream, true);
}

cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t hStream) {
    return free_async(devPtr, hStream, false);
}

cudaError_t cudaFreeAsync_ptsz(void* devPtr, cudaStream_t hStream) {
    return free_async(devPtr, hStream, true);
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t* memPool, const struct cudaMemPoolProps* poolProps) {
    CUDASIM_WITH_CONTEXT(api);
    if (memPool == nullptr || poolProps == nullptr) {
        return finish(cudaErrorInvalidValue);
    }
    CUmemPoolProps props{};
    props.allocType = static_cast<CUmemAllocationType>(poolProps->allocType);
    props.handleTypes = static_cast<CUmemAllocationHandleType>(poolProps->handleTypes);
    props.location.type = static_cast<CUmemLocationType>(poolProps->location.type);
    props.location.id = poolProps->location.id;
    props.maxSize = poolProps->maxSize;
    props.usage = poolProps->usage;
    CUmemoryPool pool = nullptr;
    CUresult r = api->cuMemPoolCreate(&pool, &props);
    if (r == CUDA_SUCCESS) {
        *memPool = pool;
    }
    return finish(r);
}

cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuMemPoolDestroy(memPool));
}

cudaError_t cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuMemPoolTrimTo(memPool, minBytesToKeep));
}

// cudaMemPoolAttr and CUmemPool_attribute share their values.
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void* value) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(
        api->cuMemPoolSetAttribute(memPool, static_cast<CUmemPool_attribute>(attr), value));
}

cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void* value) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(
        api->cuMemPoolGetAttribute(memPool, static_cast<CUmemPool_attribute>(attr), value));
}

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* memPool, int device) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuDeviceGetDefaultMemPool(memPool, device));
}

cudaError_t cudaDeviceGetMemPool(cudaMemPool_t* memPool, int device) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuDeviceGetMemPool(memPool, device));
}

cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool) {
    CUDASIM_WITH_CONTEXT(api);
    return finish(api->cuDeviceSetMemPool(device, memPool));
}
