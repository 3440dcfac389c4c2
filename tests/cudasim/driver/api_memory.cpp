// Driver API: device and managed memory, memory info and pointer attributes.
#include "api_common.h"
#include "constants.h"

#include <optional>

using namespace cudasim;

namespace {

CUresult allocate(CUdeviceptr* dptr, uint64_t bytes, AllocKind kind) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    if (dptr == nullptr || bytes == 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    Arena arena = kind == AllocKind::Managed ? Arena::Managed : Arena::Device;
    auto block = driver->memory(ctx->device).allocate(bytes, arena);
    if (!block) {
        return CUDA_ERROR_OUT_OF_MEMORY; // *dptr untouched, as the real driver does
    }
    DeviceAllocation allocation;
    allocation.device = ctx->device;
    allocation.ctx = ctx;
    allocation.kind = kind;
    allocation.requested = bytes;
    allocation.block = *block;
    allocation.id = driver->next_allocation_id();
    driver->device_allocations.emplace(block->addr, allocation);
    *dptr = block->addr;
    return CUDA_SUCCESS;
}

// Everything cuPointerGetAttribute can say about one address.
struct PointerInfo {
    CUmemorytype type = CU_MEMORYTYPE_DEVICE;
    bool managed = false;
    bool host_accessible = false;
    int device = 0;
    CUcontext ctx = nullptr;
    uint64_t base = 0;
    uint64_t size = 0;
    uint64_t id = 0;
    CUmemoryPool pool = nullptr;
};

std::optional<PointerInfo> describe(Driver& driver, uint64_t addr) {
    PointerInfo info;
    if (auto it = driver.find_device_allocation(addr); it != driver.device_allocations.end()) {
        const DeviceAllocation& a = it->second;
        info.managed = a.kind == AllocKind::Managed;
        info.host_accessible = info.managed;
        info.device = a.device;
        info.ctx = a.ctx;
        info.base = it->first;
        info.size = a.requested;
        info.id = a.id;
        info.pool = a.pool;
        return info;
    }
    if (auto it = driver.find_host_allocation(addr); it != driver.host_allocations.end()) {
        info.type = CU_MEMORYTYPE_HOST;
        info.host_accessible = true;
        info.device = it->second.device;
        info.ctx = it->second.ctx;
        info.base = it->first;
        info.size = it->second.size;
        info.id = it->second.id;
        return info;
    }
    if (auto mapping = driver.vmm.find_mapping(addr)) {
        info.type = mapping->device >= 0 ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
        info.host_accessible = mapping->device < 0;
        info.device = mapping->device >= 0 ? mapping->device : 0;
        info.base = mapping->base;
        info.size = mapping->size;
        info.id = mapping->allocation_id;
        return info;
    }
    return std::nullopt;
}

template <typename T> CUresult put(void* data, T value) {
    *static_cast<T*>(data) = value;
    return CUDA_SUCCESS;
}

CUresult pointer_attribute(const PointerInfo& info, CUpointer_attribute attribute, uint64_t addr,
                           void* data) {
    switch (attribute) {
    case CU_POINTER_ATTRIBUTE_CONTEXT:
        return put<CUcontext>(data, info.ctx);
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        return put<unsigned int>(data, info.type);
    case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
        return put<CUdeviceptr>(data, addr);
    case CU_POINTER_ATTRIBUTE_HOST_POINTER:
        if (!info.host_accessible) {
            return CUDA_ERROR_INVALID_VALUE;
        }
        return put<void*>(data, reinterpret_cast<void*>(addr));
    case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
        return put<int>(data, 1);
    case CU_POINTER_ATTRIBUTE_BUFFER_ID:
    case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID:
        return put<unsigned long long>(data, info.id);
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        return put<int>(data, info.managed ? 1 : 0);
    case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
        return put<int>(data, info.device);
    case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
    case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
        return put<CUdeviceptr>(data, info.base);
    case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
    case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
        return put<size_t>(data, info.size);
    case CU_POINTER_ATTRIBUTE_MAPPED:
        return put<int>(data, 1);
    case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
        return put<int>(data, CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);
    case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
        return put<CUmemoryPool>(data, info.pool);
    case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE:
    case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
        return put<int>(data, 0);
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

} // namespace

CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
    return allocate(dptr, bytesize, AllocKind::Device);
}

CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes, size_t Height,
                            unsigned int ElementSizeBytes) {
    if (pPitch == nullptr || WidthInBytes == 0 || Height == 0 ||
        (ElementSizeBytes != 4 && ElementSizeBytes != 8 && ElementSizeBytes != 16)) {
        // Still report a missing context or driver first, like every other call.
        Locked driver;
        CUcontext ctx = nullptr;
        CUDASIM_TRY(driver->current_context(&ctx));
        return CUDA_ERROR_INVALID_VALUE;
    }
    uint64_t pitch = align_up(WidthInBytes, kPitchAlignment);
    if (Height > UINT64_MAX / pitch) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    CUresult result = allocate(dptr, pitch * Height, AllocKind::Pitch);
    if (result == CUDA_SUCCESS) {
        *pPitch = pitch;
    }
    return result;
}

CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
    if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    return allocate(dptr, bytesize, AllocKind::Managed);
}

CUresult cuMemFree_v2(CUdeviceptr dptr) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    if (dptr == 0) {
        return CUDA_SUCCESS;
    }
    // Only the exact base of a live device, managed or pool allocation can be freed: interior
    // pointers, pinned host memory, arrays and VMM mappings are all invalid values here.
    auto it = driver->device_allocations.find(dptr);
    if (it == driver->device_allocations.end()) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    driver->free_device_allocation(it);
    return CUDA_SUCCESS;
}

CUresult cuMemGetAddressRange_v2(CUdeviceptr* pbase, size_t* psize, CUdeviceptr dptr) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    uint64_t base = 0;
    uint64_t size = 0;
    if (auto it = driver->find_device_allocation(dptr); it != driver->device_allocations.end()) {
        base = it->first;
        size = it->second.requested;
    } else if (auto mapping = driver->vmm.find_mapping(dptr)) {
        base = mapping->base;
        size = mapping->size;
    } else {
        return CUDA_ERROR_NOT_FOUND;
    }
    if (pbase != nullptr) {
        *pbase = base;
    }
    if (psize != nullptr) {
        *psize = size;
    }
    return CUDA_SUCCESS;
}

CUresult cuMemGetInfo_v2(size_t* free, size_t* total) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    if (free == nullptr || total == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    const DeviceMemory& memory = driver->memory(ctx->device);
    *free = memory.free_bytes();
    *total = memory.capacity();
    return CUDA_SUCCESS;
}

CUresult cuPointerGetAttribute(void* data, CUpointer_attribute attribute, CUdeviceptr ptr) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (data == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    auto info = describe(*driver, ptr);
    if (!info) {
        return CUDA_ERROR_INVALID_VALUE; // not memory CUDA knows about
    }
    return pointer_attribute(*info, attribute, ptr, data);
}

CUresult cuPointerGetAttributes(unsigned int numAttributes, CUpointer_attribute* attributes,
                                void** data, CUdeviceptr ptr) {
    Locked driver;
    CUDASIM_TRY(driver->ready());
    if (numAttributes == 0 || attributes == nullptr || data == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // Unlike the single-attribute query, this one describes unknown memory instead of failing:
    // memory type 0 and null context, which is how callers recognize plain host memory.
    auto info = describe(*driver, ptr);
    for (unsigned i = 0; i < numAttributes; ++i) {
        if (data[i] == nullptr) {
            continue;
        }
        if (!info) {
            if (attributes[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL) {
                put<int>(data[i], -2);
            } else if (attributes[i] == CU_POINTER_ATTRIBUTE_CONTEXT ||
                       attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER ||
                       attributes[i] == CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE) {
                put<void*>(data[i], nullptr);
            } else if (attributes[i] == CU_POINTER_ATTRIBUTE_DEVICE_POINTER ||
                       attributes[i] == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR ||
                       attributes[i] == CU_POINTER_ATTRIBUTE_BUFFER_ID) {
                put<uint64_t>(data[i], 0);
            } else {
                put<int>(data[i], 0);
            }
            continue;
        }
        CUresult result = pointer_attribute(*info, attributes[i], ptr, data[i]);
        if (result != CUDA_SUCCESS && attributes[i] == CU_POINTER_ATTRIBUTE_HOST_POINTER) {
            put<void*>(data[i], nullptr);
        } else if (result != CUDA_SUCCESS) {
            return result;
        }
    }
    return CUDA_SUCCESS;
}
