// Driver API: pinned host memory, allocated by the driver or registered by the program.
//
// Pinned memory is real host memory and is not charged to any device, but it belongs to the
// context it was allocated in and goes away with it.
#include "api_common.h"
#include "host_memory.h"

using namespace cudasim;

namespace {

constexpr unsigned kHostAllocFlags =
    CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
constexpr unsigned kHostRegisterFlags = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
                                        CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;

bool overlaps_host_allocation(Driver& driver, uint64_t addr, uint64_t size) {
    auto next = driver.host_allocations.lower_bound(addr);
    if (next != driver.host_allocations.end() && next->first < addr + size) {
        return true;
    }
    if (next != driver.host_allocations.begin()) {
        auto prev = std::prev(next);
        return prev->first + prev->second.size > addr;
    }
    return false;
}

CUresult record(Driver& driver, CUcontext ctx, void* ptr, uint64_t size, unsigned flags,
                bool registered) {
    HostAllocation allocation;
    allocation.size = size;
    allocation.ctx = ctx;
    allocation.device = ctx->device;
    allocation.flags = flags;
    allocation.registered = registered;
    allocation.id = driver.next_allocation_id();
    driver.host_allocations.emplace(address_of(ptr), allocation);
    return CUDA_SUCCESS;
}

} // namespace

CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int Flags) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    if (pp == nullptr || bytesize == 0 || (Flags & ~kHostAllocFlags) != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    void* ptr = host_memory::allocate_pinned(bytesize);
    if (ptr == nullptr) {
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    record(*driver, ctx, ptr, bytesize, Flags, /*registered=*/false);
    *pp = ptr;
    return CUDA_SUCCESS;
}

CUresult cuMemAllocHost_v2(void** pp, size_t bytesize) {
    return cuMemHostAlloc(pp, bytesize, 0);
}

CUresult cuMemFreeHost(void* p) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    auto it = driver->host_allocations.find(address_of(p));
    // Device pointers, registered program memory and unknown pointers are all invalid here.
    if (it == driver->host_allocations.end() || it->second.registered) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    driver->free_host_allocation(it);
    return CUDA_SUCCESS;
}

CUresult cuMemHostRegister_v2(void* p, size_t bytesize, unsigned int Flags) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    if (p == nullptr || bytesize == 0 || (Flags & ~kHostRegisterFlags) != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if (overlaps_host_allocation(*driver, address_of(p), bytesize)) {
        return CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    }
    return record(*driver, ctx, p, bytesize, Flags, /*registered=*/true);
}

CUresult cuMemHostRegister(void* p, size_t bytesize, unsigned int Flags) {
    return cuMemHostRegister_v2(p, bytesize, Flags);
}

CUresult cuMemHostUnregister(void* p) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    auto it = driver->host_allocations.find(address_of(p));
    if (it == driver->host_allocations.end() || !it->second.registered) {
        return CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
    }
    driver->free_host_allocation(it);
    return CUDA_SUCCESS;
}

CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr* pdptr, void* p, unsigned int Flags) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    if (pdptr == nullptr || Flags != 0 ||
        driver->find_host_allocation(address_of(p)) == driver->host_allocations.end()) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // Unified addressing: the device sees pinned memory at its host address.
    *pdptr = address_of(p);
    return CUDA_SUCCESS;
}

CUresult cuMemHostGetFlags(unsigned int* pFlags, void* p) {
    Locked driver;
    CUcontext ctx = nullptr;
    CUDASIM_TRY(driver->current_context(&ctx));
    auto it = driver->find_host_allocation(address_of(p));
    if (pFlags == nullptr || it == driver->host_allocations.end()) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    *pFlags = it->second.flags;
    return CUDA_SUCCESS;
}
