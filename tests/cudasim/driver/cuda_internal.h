// Every driver source includes cuda.h through this header.
//
// The simulator defines the exported functions under their real ABI names (cuMemAlloc_v2,
// cuMemAllocAsync_ptsz, the 4-argument cuGetProcAddress, ...). NVIDIA builds libcuda with
// __CUDA_API_VERSION_INTERNAL, which drops cuda.h's name-versioning macros and declares every
// ABI version of every function; doing the same here makes the compiler check each of our
// definitions against the real prototype.
#pragma once

#ifndef __CUDA_API_VERSION_INTERNAL
#define __CUDA_API_VERSION_INTERNAL 1
#endif
#include <cuda.h>
