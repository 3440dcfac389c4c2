// Every runtime source includes the CUDA headers through this header.
//
// Like the real libcudart, the simulator defines both the plain and the per-thread-stream
// (_ptds/_ptsz) exports. __CUDA_API_VERSION_INTERNAL makes cuda_runtime_api.h declare both
// under their real names instead of renaming one to the other, so the compiler checks each of
// our definitions against NVIDIA's prototype.
#pragma once

#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL 1
#endif
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
