// An approximation of the stream-ordered pool PyTorch's backend:cudaMallocAsync serves
// tensors from (a CUDA memory pool, cudaMallocAsync / cudaFreeAsync), as a policy of the
// allocator model (allocator_model.h): one pool for every size and stream, its memory
// mapped in 2 MiB pages as it grows and kept (PyTorch sets the pool's release threshold to
// its maximum), sizes rounded to 512 bytes, a block reusable by any stream once its free
// completed, best fit by size then address, every split allowed, and on a failed
// allocation at a capacity the free whole pages given back and the allocation tried once
// more. The driver's own placement policy is not documented: every figure of this model is
// an estimate (docs/whatif.md).
#pragma once

#include "analysis/whatif/allocator_model.h"

namespace gmt::analyzer {

inline constexpr uint64_t kStreamOrderedPage = 2u << 20;

ModelPolicy streamOrderedPoolPolicy();

} // namespace gmt::analyzer
