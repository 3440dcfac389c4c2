// The driver functions the runtime uses, reached exactly as NVIDIA's runtime reaches them.
//
// libcuda.so.1 is dlopen'ed and asked for ONE symbol, cuGetProcAddress_v2. That pointer is asked
// for "", "cuInit", then "cuGetProcAddress" at versions 11030 and 12000 (the real runtime's
// questions, in its order); every other driver function comes from the cuGetProcAddress it
// returned for 12000, never from dlsym. A tracer that wraps
// that resolver therefore sees every allocation the runtime makes. The runtime never links
// libcuda.
#pragma once

#include "cudart_internal.h"

namespace cudasim::rt {

// X(name, version): the driver function `name` at ABI `version` (its cudaTypedefs.h suffix).
// P(name, version, suffix): its per-thread-default-stream flavour.
#define CUDASIM_DRIVER_FUNCTIONS(X, P)                                                             \
    X(cuDriverGetVersion, 2020)                                                                    \
    X(cuDeviceGet, 2000)                                                                           \
    X(cuDeviceGetCount, 2000)                                                                      \
    X(cuDeviceGetName, 2000)                                                                       \
    X(cuDeviceGetUuid, 11040)                                                                      \
    X(cuDeviceTotalMem, 3020)                                                                      \
    X(cuDeviceGetAttribute, 2000)                                                                  \
    X(cuDevicePrimaryCtxRetain, 7000)                                                              \
    X(cuDevicePrimaryCtxRelease, 11000)                                                            \
    X(cuDevicePrimaryCtxReset, 11000)                                                              \
    X(cuDevicePrimaryCtxGetState, 7000)                                                            \
    X(cuDevicePrimaryCtxSetFlags, 11000)                                                           \
    X(cuCtxGetCurrent, 4000)                                                                       \
    X(cuCtxSetCurrent, 4000)                                                                       \
    X(cuCtxGetDevice, 13000)                                                                       \
    X(cuCtxSynchronize, 13000)                                                                     \
    X(cuMemGetInfo, 3020)                                                                          \
    X(cuMemAlloc, 3020)                                                                            \
    X(cuMemAllocPitch, 3020)                                                                       \
    X(cuMemFree, 3020)                                                                             \
    X(cuMemAllocManaged, 6000)                                                                     \
    X(cuMemHostAlloc, 2020)                                                                        \
    X(cuMemFreeHost, 2000)                                                                         \
    X(cuMemHostRegister, 6050)                                                                     \
    X(cuMemHostUnregister, 4000)                                                                   \
    X(cuMemHostGetDevicePointer, 3020)                                                             \
    X(cuMemHostGetFlags, 2030)                                                                     \
    X(cuPointerGetAttribute, 4000)                                                                 \
    X(cuArrayCreate, 3020)                                                                         \
    X(cuArray3DCreate, 3020)                                                                       \
    X(cuArrayDestroy, 2000)                                                                        \
    X(cuMipmappedArrayCreate, 5000)                                                                \
    X(cuMipmappedArrayDestroy, 5000)                                                               \
    X(cuMemAllocAsync, 11020)                                                                      \
    P(cuMemAllocAsync, 11020, ptsz)                                                                \
    X(cuMemAllocFromPoolAsync, 11020)                                                              \
    P(cuMemAllocFromPoolAsync, 11020, ptsz)                                                        \
    X(cuMemFreeAsync, 11020)                                                                       \
    P(cuMemFreeAsync, 11020, ptsz)                                                                 \
    X(cuMemPoolCreate, 11020)                                                                      \
    X(cuMemPoolDestroy, 11020)                                                                     \
    X(cuMemPoolTrimTo, 11020)                                                                      \
    X(cuMemPoolSetAttribute, 11020)                                                                \
    X(cuMemPoolGetAttribute, 11020)                                                                \
    X(cuDeviceGetDefaultMemPool, 11020)                                                            \
    X(cuDeviceGetMemPool, 11020)                                                                   \
    X(cuDeviceSetMemPool, 11020)                                                                   \
    X(cuStreamCreate, 2000)                                                                        \
    X(cuStreamCreateWithPriority, 5050)                                                            \
    X(cuStreamDestroy, 4000)                                                                       \
    X(cuStreamSynchronize, 2000)                                                                   \
    P(cuStreamSynchronize, 7000, ptsz)                                                             \
    X(cuStreamQuery, 2000)                                                                         \
    P(cuStreamQuery, 7000, ptsz)                                                                   \
    X(cuStreamWaitEvent, 3020)                                                                     \
    P(cuStreamWaitEvent, 7000, ptsz)                                                               \
    X(cuEventCreate, 2000)                                                                         \
    X(cuEventRecord, 2000)                                                                         \
    P(cuEventRecord, 7000, ptsz)                                                                   \
    X(cuEventQuery, 2000)                                                                          \
    X(cuEventSynchronize, 2000)                                                                    \
    X(cuEventDestroy, 4000)                                                                        \
    X(cuEventElapsedTime, 12080)

struct DriverApi {
    PFN_cuInit_v2000 cuInit = nullptr;
    PFN_cuGetProcAddress_v12000 cuGetProcAddress = nullptr;
#define CUDASIM_DECLARE(name, version) PFN_##name##_v##version name = nullptr;
#define CUDASIM_DECLARE_PER_THREAD(name, version, suffix)                                          \
    PFN_##name##_v##version##_##suffix name##_##suffix = nullptr;
    CUDASIM_DRIVER_FUNCTIONS(CUDASIM_DECLARE, CUDASIM_DECLARE_PER_THREAD)
#undef CUDASIM_DECLARE
#undef CUDASIM_DECLARE_PER_THREAD
};

// Loads the driver on first use; later calls return the first call's outcome. `*api` is set
// even on failure (functions resolved before cuInit failed are usable); functions the driver
// does not provide stay null.
cudaError_t load_driver(const DriverApi** api);

} // namespace cudasim::rt
