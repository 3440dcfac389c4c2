// Runtime error codes: translation from the driver's, and the per-thread "last error".
#pragma once

#include "cudart_internal.h"

namespace cudasim::rt {

cudaError_t to_runtime_error(CUresult result);

// Every exported runtime function returns through this: a failure becomes the calling thread's
// last error (read by cudaPeekAtLastError, read and cleared by cudaGetLastError), a success
// leaves it alone, as in the real runtime.
cudaError_t finish(cudaError_t error);
inline cudaError_t finish(CUresult result) {
    return finish(to_runtime_error(result));
}

cudaError_t& last_error();

} // namespace cudasim::rt
