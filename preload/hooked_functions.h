// The one table of functions gpumemtrace interposes. Each X(ret, name, params, args)
// entry yields: an exported wrapper (written by hand in hooks/, where the semantics
// live), a slot for the real function, and an entry in the pointer-identity table that
// lets dlsym and cuGetProcAddress hand out the wrapper instead of the real function.
// Names are the exact exported ABI names (cuMemAlloc_v2, not the cuMemAlloc macro).
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

// cuda.h maps cuGetProcAddress to cuGetProcAddress_v2; both ABIs are exported by libcuda
// and cudart asks for both, so both must be wrapped under their own names.
#undef cuGetProcAddress

#define GMT_DRIVER_HOOKS(X)                                                                        \
    X(CUresult, cuMemAlloc_v2, (CUdeviceptr * dptr, size_t bytesize), (dptr, bytesize))            \
    X(CUresult, cuMemAllocPitch_v2,                                                                \
      (CUdeviceptr * dptr, size_t * pPitch, size_t width, size_t height, unsigned int elem),       \
      (dptr, pPitch, width, height, elem))                                                         \
    X(CUresult, cuMemFree_v2, (CUdeviceptr dptr), (dptr))                                          \
    X(CUresult, cuMemAllocAsync, (CUdeviceptr * dptr, size_t bytesize, CUstream stream),           \
      (dptr, bytesize, stream))                                                                    \
    X(CUresult, cuMemAllocAsync_ptsz, (CUdeviceptr * dptr, size_t bytesize, CUstream stream),      \
      (dptr, bytesize, stream))                                                                    \
    X(CUresult, cuMemAllocFromPoolAsync,                                                           \
      (CUdeviceptr * dptr, size_t bytesize, CUmemoryPool pool, CUstream stream),                   \
      (dptr, bytesize, pool, stream))                                                              \
    X(CUresult, cuMemAllocFromPoolAsync_ptsz,                                                      \
      (CUdeviceptr * dptr, size_t bytesize, CUmemoryPool pool, CUstream stream),                   \
      (dptr, bytesize, pool, stream))                                                              \
    X(CUresult, cuMemFreeAsync, (CUdeviceptr dptr, CUstream stream), (dptr, stream))               \
    X(CUresult, cuMemFreeAsync_ptsz, (CUdeviceptr dptr, CUstream stream), (dptr, stream))          \
    X(CUresult, cuMemAllocManaged, (CUdeviceptr * dptr, size_t bytesize, unsigned int flags),      \
      (dptr, bytesize, flags))                                                                     \
    X(CUresult, cuMemAllocHost_v2, (void** pp, size_t bytesize), (pp, bytesize))                   \
    X(CUresult, cuMemHostAlloc, (void** pp, size_t bytesize, unsigned int flags),                  \
      (pp, bytesize, flags))                                                                       \
    X(CUresult, cuMemFreeHost, (void* p), (p))                                                     \
    X(CUresult, cuMemHostRegister_v2, (void* p, size_t bytesize, unsigned int flags),              \
      (p, bytesize, flags))                                                                        \
    X(CUresult, cuMemHostUnregister, (void* p), (p))                                               \
    X(CUresult, cuArrayCreate_v2, (CUarray * handle, const CUDA_ARRAY_DESCRIPTOR* desc),           \
      (handle, desc))                                                                              \
    X(CUresult, cuArray3DCreate_v2, (CUarray * handle, const CUDA_ARRAY3D_DESCRIPTOR* desc),       \
      (handle, desc))                                                                              \
    X(CUresult, cuArrayDestroy, (CUarray handle), (handle))                                        \
    X(CUresult, cuMipmappedArrayCreate,                                                            \
      (CUmipmappedArray * handle, const CUDA_ARRAY3D_DESCRIPTOR* desc, unsigned int levels),       \
      (handle, desc, levels))                                                                      \
    X(CUresult, cuMipmappedArrayDestroy, (CUmipmappedArray handle), (handle))                      \
    X(CUresult, cuMemAddressReserve,                                                               \
      (CUdeviceptr * ptr, size_t size, size_t alignment, CUdeviceptr addr,                         \
       unsigned long long flags),                                                                  \
      (ptr, size, alignment, addr, flags))                                                         \
    X(CUresult, cuMemAddressFree, (CUdeviceptr ptr, size_t size), (ptr, size))                     \
    X(CUresult, cuMemCreate,                                                                       \
      (CUmemGenericAllocationHandle * handle, size_t size, const CUmemAllocationProp* prop,        \
       unsigned long long flags),                                                                  \
      (handle, size, prop, flags))                                                                 \
    X(CUresult, cuMemRelease, (CUmemGenericAllocationHandle handle), (handle))                     \
    X(CUresult, cuMemMap,                                                                          \
      (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,           \
       unsigned long long flags),                                                                  \
      (ptr, size, offset, handle, flags))                                                          \
    X(CUresult, cuMemUnmap, (CUdeviceptr ptr, size_t size), (ptr, size))                           \
    X(CUresult, cuMemImportFromShareableHandle,                                                    \
      (CUmemGenericAllocationHandle * handle, void* osHandle, CUmemAllocationHandleType type),     \
      (handle, osHandle, type))                                                                    \
    X(CUresult, cuMemRetainAllocationHandle, (CUmemGenericAllocationHandle * handle, void* addr),  \
      (handle, addr))                                                                              \
    X(CUresult, cuDevicePrimaryCtxReset_v2, (CUdevice dev), (dev))                                 \
    X(CUresult, cuCtxDestroy_v2, (CUcontext ctx), (ctx))                                           \
    X(CUresult, cuCtxCreate_v2, (CUcontext * pctx, unsigned int flags, CUdevice dev),              \
      (pctx, flags, dev))                                                                          \
    X(CUresult, cuCtxCreate_v4,                                                                    \
      (CUcontext * pctx, CUctxCreateParams * params, unsigned int flags, CUdevice dev),            \
      (pctx, params, flags, dev))                                                                  \
    X(CUresult, cuMemPoolCreate, (CUmemoryPool * pool, const CUmemPoolProps* props),               \
      (pool, props))                                                                               \
    X(CUresult, cuMemPoolDestroy, (CUmemoryPool pool), (pool))                                     \
    X(CUresult, cuMemPoolTrimTo, (CUmemoryPool pool, size_t keep), (pool, keep))                   \
    X(CUresult, cuCtxSetCurrent, (CUcontext ctx), (ctx))                                           \
    X(CUresult, cuCtxPushCurrent_v2, (CUcontext ctx), (ctx))                                       \
    X(CUresult, cuCtxPopCurrent_v2, (CUcontext * pctx), (pctx))                                    \
    X(CUresult, cuDevicePrimaryCtxRelease_v2, (CUdevice dev), (dev))                               \
    X(CUresult, cuGetProcAddress, (const char* symbol, void** pfn, int version, cuuint64_t flags), \
      (symbol, pfn, version, flags))                                                               \
    X(CUresult, cuGetProcAddress_v2,                                                               \
      (const char* symbol, void** pfn, int version, cuuint64_t flags,                              \
       CUdriverProcAddressQueryResult* status),                                                    \
      (symbol, pfn, version, flags, status))

#define GMT_RUNTIME_HOOKS(X)                                                                       \
    X(cudaError_t, cudaMalloc, (void** p, size_t size), (p, size))                                 \
    X(cudaError_t, cudaFree, (void* p), (p))                                                       \
    X(cudaError_t, cudaMallocPitch, (void** p, size_t* pitch, size_t width, size_t height),        \
      (p, pitch, width, height))                                                                   \
    X(cudaError_t, cudaMalloc3D, (cudaPitchedPtr * p, cudaExtent extent), (p, extent))             \
    X(cudaError_t, cudaMallocAsync, (void** p, size_t size, cudaStream_t stream),                  \
      (p, size, stream))                                                                           \
    X(cudaError_t, cudaMallocAsync_ptsz, (void** p, size_t size, cudaStream_t stream),             \
      (p, size, stream))                                                                           \
    X(cudaError_t, cudaMallocFromPoolAsync,                                                        \
      (void** p, size_t size, cudaMemPool_t pool, cudaStream_t stream), (p, size, pool, stream))   \
    X(cudaError_t, cudaMallocFromPoolAsync_ptsz,                                                   \
      (void** p, size_t size, cudaMemPool_t pool, cudaStream_t stream), (p, size, pool, stream))   \
    X(cudaError_t, cudaFreeAsync, (void* p, cudaStream_t stream), (p, stream))                     \
    X(cudaError_t, cudaFreeAsync_ptsz, (void* p, cudaStream_t stream), (p, stream))                \
    X(cudaError_t, cudaMallocManaged, (void** p, size_t size, unsigned int flags),                 \
      (p, size, flags))                                                                            \
    X(cudaError_t, cudaMallocHost, (void** p, size_t size), (p, size))                             \
    X(cudaError_t, cudaHostAlloc, (void** p, size_t size, unsigned int flags), (p, size, flags))   \
    X(cudaError_t, cudaFreeHost, (void* p), (p))                                                   \
    X(cudaError_t, cudaHostRegister, (void* p, size_t size, unsigned int flags), (p, size, flags)) \
    X(cudaError_t, cudaHostUnregister, (void* p), (p))                                             \
    X(cudaError_t, cudaMallocArray,                                                                \
      (cudaArray_t * array, const cudaChannelFormatDesc* desc, size_t width, size_t height,        \
       unsigned int flags),                                                                        \
      (array, desc, width, height, flags))                                                         \
    X(cudaError_t, cudaMalloc3DArray,                                                              \
      (cudaArray_t * array, const cudaChannelFormatDesc* desc, cudaExtent extent,                  \
       unsigned int flags),                                                                        \
      (array, desc, extent, flags))                                                                \
    X(cudaError_t, cudaMallocMipmappedArray,                                                       \
      (cudaMipmappedArray_t * array, const cudaChannelFormatDesc* desc, cudaExtent extent,         \
       unsigned int levels, unsigned int flags),                                                   \
      (array, desc, extent, levels, flags))                                                        \
    X(cudaError_t, cudaFreeArray, (cudaArray_t array), (array))                                    \
    X(cudaError_t, cudaFreeMipmappedArray, (cudaMipmappedArray_t array), (array))                  \
    X(cudaError_t, cudaDeviceReset, (), ())                                                        \
    X(cudaError_t, cudaMemPoolCreate, (cudaMemPool_t * pool, const cudaMemPoolProps* props),       \
      (pool, props))                                                                               \
    X(cudaError_t, cudaMemPoolDestroy, (cudaMemPool_t pool), (pool))                               \
    X(cudaError_t, cudaMemPoolTrimTo, (cudaMemPool_t pool, size_t keep), (pool, keep))             \
    X(cudaError_t, cudaSetDevice, (int device), (device))                                          \
    X(cudaError_t, cudaSetDeviceFlags, (unsigned int flags), (flags))                              \
    X(cudaError_t, cudaInitDevice, (int device, unsigned int device_flags, unsigned int flags),    \
      (device, device_flags, flags))

// Driver functions the tracer calls itself (never wrapped): device ordinal, context,
// out-of-memory facts, the device records of the trace header and where an imported
// VMM handle lives.
#define GMT_DRIVER_QUERIES(X)                                                                      \
    X(CUresult, cuCtxGetDevice, (CUdevice * dev), (dev))                                           \
    X(CUresult, cuCtxGetCurrent, (CUcontext * ctx), (ctx))                                         \
    X(CUresult, cuMemGetInfo_v2, (size_t * free, size_t * total), (free, total))                   \
    X(CUresult, cuDriverGetVersion, (int* version), (version))                                     \
    X(CUresult, cuDeviceGetCount, (int* count), (count))                                           \
    X(CUresult, cuDeviceGet, (CUdevice * dev, int ordinal), (dev, ordinal))                        \
    X(CUresult, cuDeviceGetName, (char* name, int len, CUdevice dev), (name, len, dev))            \
    X(CUresult, cuDeviceTotalMem_v2, (size_t * bytes, CUdevice dev), (bytes, dev))                 \
    X(CUresult, cuMemGetAllocationGranularity,                                                     \
      (size_t * granularity, const CUmemAllocationProp* prop,                                      \
       CUmemAllocationGranularity_flags option),                                                   \
      (granularity, prop, option))                                                                 \
    X(CUresult, cuMemGetAllocationPropertiesFromHandle,                                            \
      (CUmemAllocationProp * prop, CUmemGenericAllocationHandle handle), (prop, handle))
