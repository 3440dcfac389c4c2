// Driver API: cuGetProcAddress, the door through which the CUDA runtime (and any tracer
// wrapping it) reaches every other driver function.
#include "cuda_internal.h"
#include "proc_table.h"

CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                             CUdriverProcAddressQueryResult* symbolStatus) {
    return cudasim::resolve_proc(symbol, pfn, cudaVersion, flags, symbolStatus);
}

CUresult cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags) {
    return cudasim::resolve_proc(symbol, pfn, cudaVersion, flags, nullptr);
}
