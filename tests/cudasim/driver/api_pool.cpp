// Driver API: stream-ordered allocation and memory pools.
#include "api_common.h"

using namespace cudasim;

namespace {

// `pool` null means the current pool of the stream's device.
CUresult allocate_async(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream stream) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    if (dptr == nullptr || bytesize == 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    int device = 0;
    CUDASIM_TRY(driver->stream_device(stream, &device));
    if (pool == nullptr) {
        pool = driver->current_pool(device);
    } else if (!driver->pools.contains(pool)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    auto block = pool->allocate(driver->memory(pool->device()), bytesize);
    if (!block) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    DeviceAllocation allocation;
    allocation.device = pool->device();
    allocation.ctx = ctx;
    allocation.kind = AllocKind::Pool;
    allocation.requested = bytesize;
    allocation.block = *block;
    allocation.pool = pool;
    allocation.id = driver->next_allocation_id();
    driver->device_allocations.emplace(block->addr, allocation);
    *dptr = block->addr;
    return CUDA_SUCCESS;
}

// The simulator has no queue, so a stream-ordered free takes effect at once: the bytes go
// back to the pool (not to the device) and can be reused by the next allocation.
CUresult free_async(CUdeviceptr dptr, CUstream stream) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    if (!driver->is_valid_stream(stream)) {
        return CUDA_ERROR_INVALID_HANDLE;
    }
    auto it = driver->device_allocations.find(dptr);
    if (it == driver->device_allocations.end()) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    driver->free_device_allocation(it);
    return CUDA_SUCCESS;
}

CUresult check_pool(Driver& driver, CUmemoryPool pool) {
    CUDASIM_TRY(driver.ready());
    return driver.pools.contains(pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

} // namespace

CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
    return allocate_async(dptr, bytesize, nullptr, hStream);
}

CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream hStream) {
    return allocate_async(dptr, bytesize, nullptr, hStream);
}

CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                 CUstream hStream) {
    if (pool == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return allocate_async(dptr, bytesize, pool, hStream);
}

CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                      CUstream hStream) {
    return cuMemAllocFromPoolAsync(dptr, bytesize, pool, hStream);
}

CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) {
    return free_async(dptr, hStream);
}

CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream) {
    return free_async(dptr, hStream);
}

CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* poolProps) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (pool == nullptr || poolProps == nullptr ||
        poolProps->allocType != CU_MEM_ALLOCATION_TYPE_PINNED) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (poolProps->location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
        return CUDA_ERROR_NOT_SUPPORTED; // host-located pools are not simulated
    }
    if (driver->check_device(poolProps->location.id) != CUDA_SUCCESS) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    auto* created =
        new CUmemPoolHandle_st(poolProps->location.id, /*is_default=*/false, poolProps->maxSize);
    driver->pools.insert(created);
    *pool = created;
    return CUDA_SUCCESS;
}

CUresult cuMemPoolDestroy(CUmemoryPool pool) {
    Locked driver;
    CUDASIM_TRY(check_pool(*driver, pool));
    if (pool->is_default()) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    driver->destroy_pool(pool);
    return CUDA_SUCCESS;
}

CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t minBytesToKeep) {
    Locked driver;
    CUDASIM_TRY(check_pool(*driver, pool));
    pool->release_unused(driver->memory(pool->device()), minBytesToKeep);
    return CUDA_SUCCESS;
}

CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
    Locked driver;
    CUDASIM_TRY(check_pool(*driver, pool));
    return pool->set_attribute(attr, value);
}

CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute attr, void* value) {
    Locked driver;
    CUDASIM_TRY(check_pool(*driver, pool));
    return pool->get_attribute(attr, value);
}

CUresult cuDeviceGetDefaultMemPool(CUmemoryPool* pool_out, CUdevice dev) {
    return answer_device_query(pool_out, dev,
                               [&](Driver& driver) { return driver.default_pool(dev); });
}

CUresult cuDeviceGetMemPool(CUmemoryPool* pool, CUdevice dev) {
    return answer_device_query(pool, dev, [&](Driver& driver) { return driver.current_pool(dev); });
}

CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) {
    Locked driver;
    CUDASIM_TRY(driver->check_device(dev));
    CUDASIM_TRY(check_pool(*driver, pool));
    if (pool->device() != dev) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    driver->set_current_pool(dev, pool);
    return CUDA_SUCCESS;
}
