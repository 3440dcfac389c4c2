// Route 4 of docs/architecture.md: cuGetProcAddress. cudart (static or shared), CuPy, PyTorch's
// expandable segments and cudaGetDriverEntryPoint* all obtain driver functions here. The
// real resolver answers first; a returned pointer is replaced only when it *is* the real
// address of a wrapped function, so versioned variants (_v2, _ptsz, older ABIs) are never
// confused. A request for "cuGetProcAddress" returns these wrappers by the same rule.
#include "hook_support.h"

using namespace gmt::preload;

GMT_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int version,
                                     cuuint64_t flags) {
    CUresult r = callReal(driverReal().cuGetProcAddress, symbol, pfn, version, flags);
    if (r == CUDA_SUCCESS && pfn && Recorder::instance().active()) {
        *pfn = substituteDriverPointer(*pfn);
    }
    return r;
}

GMT_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version,
                                        cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
    CUresult r = callReal(driverReal().cuGetProcAddress_v2, symbol, pfn, version, flags, status);
    if (r == CUDA_SUCCESS && pfn && Recorder::instance().active()) {
        *pfn = substituteDriverPointer(*pfn);
    }
    return r;
}
