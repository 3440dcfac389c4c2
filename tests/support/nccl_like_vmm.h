// NCCL's way with its own GPU memory on the driver API, as ncclCuMemAlloc and
// ncclCuMemFree do it: create an exportable handle, reserve a range, map, set access; and
// to free, take the handle back from the address (cuMemRetainAllocationHandle), release that
// reference, unmap, release, free the range. Shared by tests/cli/programs/nccl_like.cpp and
// the NCCL stand-in of the 2-GPU script's dry run (tests/gpu/nccl_standin.cpp).
#pragma once

#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace gmt::test::nccl_like {

inline void check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) {
        std::fprintf(stderr, "nccl_like: %s failed: %d\n", what, static_cast<int>(r));
        std::exit(10);
    }
}

// Reserve a range for `handle`, map it there, let `device` read and write it.
__attribute__((noinline)) inline CUdeviceptr mapHandle(CUmemGenericAllocationHandle handle,
                                                       size_t bytes, int device = 0) {
    CUdeviceptr ptr = 0;
    check(cuMemAddressReserve(&ptr, bytes, 0, 0, 0), "cuMemAddressReserve");
    check(cuMemMap(ptr, bytes, 0, handle, 0), "cuMemMap");
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    check(cuMemSetAccess(ptr, bytes, &access, 1), "cuMemSetAccess");
    return ptr;
}

// As ncclCuMemAlloc: the creation reference stays held until the free.
__attribute__((noinline)) inline CUdeviceptr
cuMemAllocLikeNccl(size_t bytes, CUmemGenericAllocationHandle* out, int device = 0) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    check(cuMemCreate(out, bytes, &prop, 0), "cuMemCreate");
    return mapHandle(*out, bytes, device);
}

// As ncclCuMemFree: the handle comes back from the address.
__attribute__((noinline)) inline void cuMemFreeLikeNccl(CUdeviceptr ptr, size_t bytes) {
    CUmemGenericAllocationHandle handle = 0;
    check(cuMemRetainAllocationHandle(&handle, reinterpret_cast<void*>(ptr)), "retain");
    check(cuMemRelease(handle), "release (retained)");
    check(cuMemUnmap(ptr, bytes), "cuMemUnmap");
    check(cuMemRelease(handle), "release");
    check(cuMemAddressFree(ptr, bytes), "cuMemAddressFree");
}

} // namespace gmt::test::nccl_like
