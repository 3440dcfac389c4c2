// Runtime API: driver entry points. They forward to the cuGetProcAddress the runtime obtained
// at load time, so a tracer wrapping that resolver also sees what programs fetch this way
// (PyTorch gets its VMM functions like this).
#include "api_common.h"

using namespace cudasim::rt;

namespace {

cudaError_t entry_point(const char* symbol, void** funcPtr, int cudaVersion,
                        unsigned long long flags, cudaDriverEntryPointQueryResult* driverStatus,
                        bool per_thread_build) {
    CUDASIM_WITH_DRIVER(api);
    if (symbol == nullptr || funcPtr == nullptr) {
        return finish(cudaErrorInvalidValue);
    }
    // In a per-thread-default-stream build, "default" means the per-thread flavour.
    if (per_thread_build && flags == cudaEnableDefault) {
        flags = cudaEnablePerThreadDefaultStream;
    }
    CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = api->cuGetProcAddress(symbol, funcPtr, cudaVersion, flags, &status);
    if (driverStatus != nullptr) {
        *driverStatus = static_cast<cudaDriverEntryPointQueryResult>(status);
    }
    // A symbol the driver lacks is not an error: the pointer is NULL and the status says why.
    // The CUDA 13 driver answers so itself; a driver answering CUDA_ERROR_NOT_FOUND means the
    // same thing.
    if (r == CUDA_ERROR_NOT_FOUND) {
        *funcPtr = nullptr;
        return cudaSuccess;
    }
    return finish(r);
}

} // namespace

cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult* driverStatus) {
    return entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, false);
}

cudaError_t cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr,
                                         unsigned long long flags,
                                         enum cudaDriverEntryPointQueryResult* driverStatus) {
    return entry_point(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, true);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr,
                                             unsigned int cudaVersion, unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult* driverStatus) {
    return entry_point(symbol, funcPtr, static_cast<int>(cudaVersion), flags, driverStatus, false);
}

cudaError_t
cudaGetDriverEntryPointByVersion_ptsz(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                                      unsigned long long flags,
                                      enum cudaDriverEntryPointQueryResult* driverStatus) {
    return entry_point(symbol, funcPtr, static_cast<int>(cudaVersion), flags, driverStatus, true);
}
