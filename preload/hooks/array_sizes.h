// Bytes of a CUDA array, from its descriptor: the driver does not say how much it
// really took, so the tracer reports what the description asks for.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace gmt::preload {

uint64_t arrayBytes(const CUDA_ARRAY_DESCRIPTOR& desc);
uint64_t arrayBytes(const CUDA_ARRAY3D_DESCRIPTOR& desc, unsigned int levels = 1);
uint64_t arrayBytes(const cudaChannelFormatDesc& desc, cudaExtent extent, unsigned int levels = 1);

} // namespace gmt::preload
