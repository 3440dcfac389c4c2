// Wrappers of the runtime API, for programs that link libcudart dynamically (PyTorch,
// nvcc -cudart shared). cudart implements each through the driver, whose wrappers see
// they are nested (CallScope) and stay silent, so the event is named after these.
#include "allocation_calls.h"
#include "array_sizes.h"

using namespace gmt::preload;

GMT_EXPORT cudaError_t cudaMalloc(void** p, size_t size) {
    return traceAlloc<cudaError_t>(Api::cudaMalloc, Kind::Device, p, size, 0,
                                   [&] { return callReal(runtimeReal().cudaMalloc, p, size); });
}

GMT_EXPORT cudaError_t cudaFree(void* p) {
    return traceFree<cudaError_t>(Api::cudaFree, Kind::Device, u64(p),
                                  [&] { return callReal(runtimeReal().cudaFree, p); });
}

GMT_EXPORT cudaError_t cudaMallocPitch(void** p, size_t* pitch, size_t width, size_t height) {
    return tracePitchedAlloc<cudaError_t>(Api::cudaMallocPitch, p, pitch, width, height, [&] {
        return callReal(runtimeReal().cudaMallocPitch, p, pitch, width, height);
    });
}

GMT_EXPORT cudaError_t cudaMalloc3D(cudaPitchedPtr* p, cudaExtent extent) {
    return traceCreate<cudaError_t>(
        Op::Alloc, Api::cudaMalloc3D, Kind::Device,
        [&] { return callReal(runtimeReal().cudaMalloc3D, p, extent); },
        [&](Event& e, bool ok) {
            uint64_t rows = static_cast<uint64_t>(std::max<size_t>(extent.height, 1)) *
                            std::max<size_t>(extent.depth, 1);
            e.size = extent.width * rows;
            if (ok) {
                e.address = u64(p->ptr);
                e.offset = p->pitch;
                e.actual_size = p->pitch * rows;
            }
            fillCurrentDevice(e, true);
        });
}

GMT_EXPORT cudaError_t cudaMallocAsync(void** p, size_t size, cudaStream_t stream) {
    return traceAlloc<cudaError_t>(
        Api::cudaMallocAsync, Kind::Pool, p, size, 0,
        [&] { return callReal(runtimeReal().cudaMallocAsync, p, size, stream); }, 0, stream);
}

GMT_EXPORT cudaError_t cudaMallocAsync_ptsz(void** p, size_t size, cudaStream_t stream) {
    return traceAlloc<cudaError_t>(
        Api::cudaMallocAsync_ptsz, Kind::Pool, p, size, 0,
        [&] { return callReal(runtimeReal().cudaMallocAsync_ptsz, p, size, stream); }, 0, stream);
}

GMT_EXPORT cudaError_t cudaMallocFromPoolAsync(void** p, size_t size, cudaMemPool_t pool,
                                               cudaStream_t stream) {
    return traceAlloc<cudaError_t>(
        Api::cudaMallocFromPoolAsync, Kind::Pool, p, size, 0,
        [&] { return callReal(runtimeReal().cudaMallocFromPoolAsync, p, size, pool, stream); },
        u64(pool), stream);
}

GMT_EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void** p, size_t size, cudaMemPool_t pool,
                                                    cudaStream_t stream) {
    return traceAlloc<cudaError_t>(
        Api::cudaMallocFromPoolAsync_ptsz, Kind::Pool, p, size, 0,
        [&] { return callReal(runtimeReal().cudaMallocFromPoolAsync_ptsz, p, size, pool, stream); },
        u64(pool), stream);
}

GMT_EXPORT cudaError_t cudaFreeAsync(void* p, cudaStream_t stream) {
    return traceFree<cudaError_t>(
        Api::cudaFreeAsync, Kind::Pool, u64(p),
        [&] { return callReal(runtimeReal().cudaFreeAsync, p, stream); }, stream);
}

GMT_EXPORT cudaError_t cudaFreeAsync_ptsz(void* p, cudaStream_t stream) {
    return traceFree<cudaError_t>(
        Api::cudaFreeAsync_ptsz, Kind::Pool, u64(p),
        [&] { return callReal(runtimeReal().cudaFreeAsync_ptsz, p, stream); }, stream);
}

GMT_EXPORT cudaError_t cudaMallocManaged(void** p, size_t size, unsigned int flags) {
    return traceAlloc<cudaError_t>(Api::cudaMallocManaged, Kind::Managed, p, size, flags, [&] {
        return callReal(runtimeReal().cudaMallocManaged, p, size, flags);
    });
}

GMT_EXPORT cudaError_t cudaMallocHost(void** p, size_t size) {
    return traceAlloc<cudaError_t>(Api::cudaMallocHost, Kind::HostPinned, p, size, 0,
                                   [&] { return callReal(runtimeReal().cudaMallocHost, p, size); });
}

GMT_EXPORT cudaError_t cudaHostAlloc(void** p, size_t size, unsigned int flags) {
    return traceAlloc<cudaError_t>(Api::cudaHostAlloc, Kind::HostPinned, p, size, flags, [&] {
        return callReal(runtimeReal().cudaHostAlloc, p, size, flags);
    });
}

GMT_EXPORT cudaError_t cudaFreeHost(void* p) {
    return traceFree<cudaError_t>(Api::cudaFreeHost, Kind::HostPinned, u64(p),
                                  [&] { return callReal(runtimeReal().cudaFreeHost, p); });
}

GMT_EXPORT cudaError_t cudaHostRegister(void* p, size_t size, unsigned int flags) {
    void* out = p;
    return traceAlloc<cudaError_t>(Api::cudaHostRegister, Kind::HostPinned, &out, size, flags, [&] {
        return callReal(runtimeReal().cudaHostRegister, p, size, flags);
    });
}

GMT_EXPORT cudaError_t cudaHostUnregister(void* p) {
    return traceFree<cudaError_t>(Api::cudaHostUnregister, Kind::HostPinned, u64(p),
                                  [&] { return callReal(runtimeReal().cudaHostUnregister, p); });
}

GMT_EXPORT cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc,
                                       size_t width, size_t height, unsigned int flags) {
    uint64_t bytes = desc ? arrayBytes(*desc, cudaExtent{width, height, 0}) : 0;
    return traceArrayCreate<cudaError_t>(Api::cudaMallocArray, array, bytes, [&] {
        return callReal(runtimeReal().cudaMallocArray, array, desc, width, height, flags);
    });
}

GMT_EXPORT cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc,
                                         cudaExtent extent, unsigned int flags) {
    uint64_t bytes = desc ? arrayBytes(*desc, extent) : 0;
    return traceArrayCreate<cudaError_t>(Api::cudaMalloc3DArray, array, bytes, [&] {
        return callReal(runtimeReal().cudaMalloc3DArray, array, desc, extent, flags);
    });
}

GMT_EXPORT cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t* array,
                                                const cudaChannelFormatDesc* desc,
                                                cudaExtent extent, unsigned int levels,
                                                unsigned int flags) {
    uint64_t bytes = desc ? arrayBytes(*desc, extent, levels) : 0;
    return traceArrayCreate<cudaError_t>(Api::cudaMallocMipmappedArray, array, bytes, [&] {
        return callReal(runtimeReal().cudaMallocMipmappedArray, array, desc, extent, levels, flags);
    });
}

GMT_EXPORT cudaError_t cudaFreeArray(cudaArray_t array) {
    return traceFree<cudaError_t>(Api::cudaFreeArray, Kind::Array, u64(array),
                                  [&] { return callReal(runtimeReal().cudaFreeArray, array); });
}

GMT_EXPORT cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t array) {
    return traceFree<cudaError_t>(Api::cudaFreeMipmappedArray, Kind::Array, u64(array), [&] {
        return callReal(runtimeReal().cudaFreeMipmappedArray, array);
    });
}

GMT_EXPORT cudaError_t cudaDeviceReset() {
    return traceRelease<cudaError_t>(
        Op::Teardown, Api::cudaDeviceReset, Kind::None,
        [&] { return endingContexts([&] { return callReal(runtimeReal().cudaDeviceReset); }); },
        [&](Event& e) {
            fillCurrentDevice(e, false);
            if (e.device < 0) {
                e.device = 0; // the runtime's current device when none was chosen yet
            }
        });
}

GMT_EXPORT cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps* props) {
    return tracePoolCreate<cudaError_t>(Api::cudaMemPoolCreate, pool, props, [&] {
        return callReal(runtimeReal().cudaMemPoolCreate, pool, props);
    });
}

GMT_EXPORT cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool) {
    return tracePoolDestroy<cudaError_t>(Api::cudaMemPoolDestroy, pool, [&] {
        return callReal(runtimeReal().cudaMemPoolDestroy, pool);
    });
}

GMT_EXPORT cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t keep) {
    return tracePoolTrim<cudaError_t>(Api::cudaMemPoolTrimTo, pool, keep, [&] {
        return callReal(runtimeReal().cudaMemPoolTrimTo, pool, keep);
    });
}

// The runtime's ways of choosing the calling thread's device (and so its context): wrapped
// only so that the per-thread context cache (current_context.h) forgets.
GMT_EXPORT cudaError_t cudaSetDevice(int device) {
    return switchingContext([&] { return callReal(runtimeReal().cudaSetDevice, device); });
}

GMT_EXPORT cudaError_t cudaSetDeviceFlags(unsigned int flags) {
    return switchingContext([&] { return callReal(runtimeReal().cudaSetDeviceFlags, flags); });
}

GMT_EXPORT cudaError_t cudaInitDevice(int device, unsigned int device_flags, unsigned int flags) {
    return switchingContext(
        [&] { return callReal(runtimeReal().cudaInitDevice, device, device_flags, flags); });
}
