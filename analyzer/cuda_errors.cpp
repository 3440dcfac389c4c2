#include "cuda_errors.h"

namespace gmt::analyzer {

bool isRuntimeApi(format::Api api) {
    return format::apiName(api).starts_with("cuda");
}

namespace {

const char* runtimeName(int32_t r) {
    switch (r) {
    case 0:
        return "cudaSuccess";
    case 1:
        return "cudaErrorInvalidValue";
    case 2:
        return "cudaErrorMemoryAllocation";
    case 3:
        return "cudaErrorInitializationError";
    case 4:
        return "cudaErrorCudartUnloading";
    case 12:
        return "cudaErrorInvalidPitchValue";
    case 17:
        return "cudaErrorInvalidDevicePointer";
    case 35:
        return "cudaErrorInsufficientDriver";
    case 46:
        return "cudaErrorDevicesUnavailable";
    case 100:
        return "cudaErrorNoDevice";
    case 101:
        return "cudaErrorInvalidDevice";
    case 201:
        return "cudaErrorDeviceUninitialized";
    case 400:
        return "cudaErrorInvalidResourceHandle";
    case 700:
        return "cudaErrorIllegalAddress";
    case 709:
        return "cudaErrorContextIsDestroyed";
    case 719:
        return "cudaErrorLaunchFailure";
    case 801:
        return "cudaErrorNotSupported";
    case 999:
        return "cudaErrorUnknown";
    default:
        return nullptr;
    }
}

const char* driverName(int32_t r) {
    switch (r) {
    case 0:
        return "CUDA_SUCCESS";
    case 1:
        return "CUDA_ERROR_INVALID_VALUE";
    case 2:
        return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3:
        return "CUDA_ERROR_NOT_INITIALIZED";
    case 4:
        return "CUDA_ERROR_DEINITIALIZED";
    case 46:
        return "CUDA_ERROR_DEVICE_UNAVAILABLE";
    case 100:
        return "CUDA_ERROR_NO_DEVICE";
    case 101:
        return "CUDA_ERROR_INVALID_DEVICE";
    case 201:
        return "CUDA_ERROR_INVALID_CONTEXT";
    case 400:
        return "CUDA_ERROR_INVALID_HANDLE";
    case 500:
        return "CUDA_ERROR_NOT_FOUND";
    case 700:
        return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case 709:
        return "CUDA_ERROR_CONTEXT_IS_DESTROYED";
    case 719:
        return "CUDA_ERROR_LAUNCH_FAILED";
    case 801:
        return "CUDA_ERROR_NOT_SUPPORTED";
    case 999:
        return "CUDA_ERROR_UNKNOWN";
    default:
        return nullptr;
    }
}

} // namespace

std::string errorName(format::Api api, int32_t result) {
    const bool runtime = isRuntimeApi(api);
    const char* name = runtime ? runtimeName(result) : driverName(result);
    if (name) {
        return name;
    }
    return (runtime ? "cudaError " : "CUresult ") + std::to_string(result);
}

} // namespace gmt::analyzer
