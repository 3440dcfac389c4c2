// Driver API: virtual memory management (reserve / create / map / access / unmap / release).
#include "api_common.h"
#include "constants.h"

using namespace cudasim;

CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr,
                             unsigned long long flags) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (ptr == nullptr || flags != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    uint64_t reserved = 0;
    CUDASIM_TRY(driver->vmm.reserve(size, alignment, addr, &reserved));
    *ptr = reserved;
    return CUDA_SUCCESS;
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    return driver->vmm.free_reservation(ptr, size);
}

CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                     const CUmemAllocationProp* prop, unsigned long long flags) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (handle == nullptr || prop == nullptr || flags != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return driver->vmm.create(size, *prop, driver->devices(), handle);
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    return driver->vmm.release(handle, driver->devices());
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
                  unsigned long long flags) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (flags != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return driver->vmm.map(ptr, size, offset, handle);
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    return driver->vmm.unmap(ptr, size, driver->devices());
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc* desc, size_t count) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    return driver->vmm.set_access(ptr, size, desc, count, driver->device_count());
}

CUresult cuMemGetAllocationGranularity(size_t* granularity, const CUmemAllocationProp* prop,
                                       CUmemAllocationGranularity_flags option) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (granularity == nullptr || prop == nullptr ||
        (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
         option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
        driver->check_device(prop->location.id) != CUDA_SUCCESS) {
        return CUDA_ERROR_INVALID_DEVICE;
    }
    *granularity = kGranule;
    return CUDA_SUCCESS;
}

CUresult cuMemExportToShareableHandle(void* shareableHandle, CUmemGenericAllocationHandle handle,
                                      CUmemAllocationHandleType handleType,
                                      unsigned long long flags) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (flags != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return driver->vmm.export_handle(handle, handleType, shareableHandle);
}

CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle, void* osHandle,
                                        CUmemAllocationHandleType shHandleType) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (handle == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return driver->vmm.import_handle(osHandle, shHandleType, handle);
}

CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (handle == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return driver->vmm.retain(address_of(addr), handle);
}

CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop,
                                                CUmemGenericAllocationHandle handle) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (prop == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return driver->vmm.properties(handle, prop);
}
