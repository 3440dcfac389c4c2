// What cudaMalloc, cudaMallocManaged and cudaMallocAsync (and its pool and _ptsz variants) share
// around their driver call, so that they answer a null out-pointer or a zero size alike.
#pragma once

#include "errors.h"

namespace cudasim::rt {

// A null out-pointer is an error; a zero size succeeds with NULL and allocates nothing, as the
// real runtime does; otherwise `allocate(CUdeviceptr*)` is the driver call, and its address
// is handed out only on success. The caller has made sure of the context first.
template <typename Allocate>
cudaError_t allocate_pointer(void** devPtr, size_t size, Allocate&& allocate) {
    if (devPtr == nullptr) {
        return finish(cudaErrorInvalidValue);
    }
    if (size == 0) {
        *devPtr = nullptr;
        return cudaSuccess;
    }
    CUdeviceptr ptr = 0;
    CUresult r = allocate(&ptr);
    if (r == CUDA_SUCCESS) {
        *devPtr = reinterpret_cast<void*>(ptr);
    }
    return finish(r);
}

} // namespace cudasim::rt
