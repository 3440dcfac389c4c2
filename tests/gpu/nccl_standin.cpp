// libnccl_standin.so: NCCL's own allocations for the dry run of the 2-GPU `ranks` group
// (tests/gpu/ranks_dry_run.py), which replaces the PyTorch job by a stand-in. Its name
// starts with "libnccl" as NCCL's does, so the group's check that NCCL's allocations are
// attributed to NCCL (scripts/gpu_validate_ranks.py) meets frames of such a library here
// too. Loaded with ctypes by the stand-in rank, on the simulated CUDA.
#include "support/nccl_like_vmm.h"

#include <cuda.h>

#include <cstddef>

using namespace gmt::test::nccl_like;

// One NCCL buffer on the current context's device, allocated and freed as NCCL does.
// Returns 0, or the failing CUresult's call exits the process (check()).
extern "C" __attribute__((visibility("default"))) int nccl_standin_buffer(size_t bytes) {
    CUdevice device = 0;
    check(cuCtxGetDevice(&device), "cuCtxGetDevice");
    CUmemGenericAllocationHandle handle = 0;
    const CUdeviceptr ptr = cuMemAllocLikeNccl(bytes, &handle, device);
    cuMemFreeLikeNccl(ptr, bytes);
    return 0;
}
