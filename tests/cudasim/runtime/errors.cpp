#include "errors.h"

namespace cudasim::rt {

cudaError_t to_runtime_error(CUresult result) {
    switch (result) {
    case CUDA_SUCCESS:
        return cudaSuccess;
    case CUDA_ERROR_INVALID_VALUE:
        return cudaErrorInvalidValue;
    case CUDA_ERROR_OUT_OF_MEMORY:
        return cudaErrorMemoryAllocation;
    case CUDA_ERROR_NOT_INITIALIZED:
        return cudaErrorInitializationError;
    case CUDA_ERROR_DEINITIALIZED:
        return cudaErrorCudartUnloading;
    case CUDA_ERROR_STUB_LIBRARY:
        return cudaErrorStubLibrary;
    case CUDA_ERROR_NO_DEVICE:
        return cudaErrorNoDevice;
    case CUDA_ERROR_INVALID_DEVICE:
        return cudaErrorInvalidDevice;
    case CUDA_ERROR_INVALID_CONTEXT:
        return cudaErrorDeviceUninitialized;
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
        return cudaErrorContextIsDestroyed;
    case CUDA_ERROR_ALREADY_MAPPED:
        return cudaErrorAlreadyMapped;
    case CUDA_ERROR_NOT_MAPPED:
        return cudaErrorNotMapped;
    case CUDA_ERROR_INVALID_HANDLE:
        return cudaErrorInvalidResourceHandle;
    case CUDA_ERROR_NOT_FOUND:
        return cudaErrorSymbolNotFound;
    case CUDA_ERROR_NOT_READY:
        return cudaErrorNotReady;
    case CUDA_ERROR_OPERATING_SYSTEM:
        return cudaErrorOperatingSystem;
    case CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED:
        return cudaErrorHostMemoryAlreadyRegistered;
    case CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED:
        return cudaErrorHostMemoryNotRegistered;
    case CUDA_ERROR_NOT_PERMITTED:
        return cudaErrorNotPermitted;
    case CUDA_ERROR_NOT_SUPPORTED:
        return cudaErrorNotSupported;
    case CUDA_ERROR_LAUNCH_FAILED:
        return cudaErrorLaunchFailure;
    case CUDA_ERROR_ILLEGAL_ADDRESS:
        return cudaErrorIllegalAddress;
    default:
        return cudaErrorUnknown;
    }
}

cudaError_t& last_error() {
    thread_local cudaError_t error = cudaSuccess;
    return error;
}

cudaError_t finish(cudaError_t error) {
    if (error != cudaSuccess) {
        last_error() = error;
    }
    return error;
}

} // namespace cudasim::rt
