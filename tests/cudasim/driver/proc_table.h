// The table behind cuGetProcAddress: every exported function, by base name, ABI version and
// stream flavour.
#pragma once

#include "cuda_internal.h"

namespace cudasim {

// Resolves `symbol` the way the driver's cuGetProcAddress does: the entry with the highest
// version not above `cuda_version`, preferring the per-thread-default-stream (_ptsz/_ptds)
// entry when `flags` asks for one and it exists. An unknown name, or one with no entry old
// enough, gives CUDA_SUCCESS with a NULL pointer and the reason in `status`.
CUresult resolve_proc(const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
                      CUdriverProcAddressQueryResult* status);

} // namespace cudasim
