// Wrappers of the runtime API, for programs that link libcudart dynamically (PyTorch,
// nvcc -cudart shared). cudart implements each through the driver, whose wrappers see
// they are nested (CallScope) and stay silent, so the event is named after these.
#include "array_sizes.h"
#include "hook_support.h"

using namespace gmt::preload;

namespace {

uint64_t u64(const void* p) {
    return reinterpret_cast<uint64_t>(p);
}

// cudaMalloc-like: *p holds the address on success.
template <typename Call>
cudaError_t runtimeAlloc(Api api, Kind kind, void** p, size_t size, unsigned int flags, Call&& call,
                         uint64_t pool = 0, cudaStream_t stream = nullptr) {
    return traceCreate<cudaError_t>(Op::Alloc, api, kind, call, [&](Event& e, bool ok) {
        e.size = size;
        e.flags = flags;
        e.handle = pool;
        e.stream = u64(stream);
        if (ok && p) {
            e.address = u64(*p);
        }
        fillCurrentDevice(e, kind != Kind::Pool);
        if (kind == Kind::HostPinned) {
            e.device = -1;
        }
    });
}

template <typename Call>
cudaError_t runtimeFree(Api api, Kind kind, const void* p, Call&& call,
                        cudaStream_t stream = nullptr) {
    return traceFree<cudaError_t>(api, kind, u64(p), call,
                                  [&](Event& e) { e.stream = u64(stream); });
}

// Arrays are named by their handle, which stands in for the address.
template <typename Handle, typename Call>
cudaError_t runtimeArray(Api api, Handle* handle, uint64_t bytes, Call&& call) {
    return traceCreate<cudaError_t>(Op::Alloc, api, Kind::Array, call, [&](Event& e, bool ok) {
        e.size = bytes;
        if (ok && handle) {
            e.address = u64(*handle);
        }
        fillCurrentDevice(e, true);
    });
}

} // namespace

GMT_EXPORT cudaError_t cudaMalloc(void** p, size_t size) {
    return runtimeAlloc(Api::cudaMalloc, Kind::Device, p, size, 0,
                        [&] { return callReal(runtimeReal().cudaMalloc, p, size); });
}

GMT_EXPORT cudaError_t cudaFree(void* p) {
    return runtimeFree(Api::cudaFree, Kind::Device, p,
                       [&] { return callReal(runtimeReal().cudaFree, p); });
}

GMT_EXPORT cudaError_t cudaMallocPitch(void** p, size_t* pitch, size_t width, size_t height) {
    return traceCreate<cudaError_t>(
        Op::Alloc, Api::cudaMallocPitch, Kind::Device,
        [&] { return callReal(runtimeReal().cudaMallocPitch, p, pitch, width, height); },
        [&](Event& e, bool ok) {
            e.size = static_cast<uint64_t>(width) * height;
            if (ok) {
                e.address = u64(*p);
                e.offset = *pitch;
                e.actual_size = static_cast<uint64_t>(*pitch) * height;
            }
            fillCurrentDevice(e, true);
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
    return runtimeAlloc(
        Api::cudaMallocAsync, Kind::Pool, p, size, 0,
        [&] { return callReal(runtimeReal().cudaMallocAsync, p, size, stream); }, 0, stream);
}

GMT_EXPORT cudaError_t cudaMallocAsync_ptsz(void** p, size_t size, cudaStream_t stream) {
    return runtimeAlloc(
        Api::cudaMallocAsync_ptsz, Kind::Pool, p, size, 0,
        [&] { return callReal(runtimeReal().cudaMallocAsync_ptsz, p, size, stream); }, 0, stream);
}

GMT_EXPORT cudaError_t cudaMallocFromPoolAsync(void** p, size_t size, cudaMemPool_t pool,
                                               cudaStream_t stream) {
    return runtimeAlloc(
        Api::cudaMallocFromPoolAsync, Kind::Pool, p, size, 0,
        [&] { return callReal(runtimeReal().cudaMallocFromPoolAsync, p, size, pool, stream); },
        u64(pool), stream);
}

GMT_EXPORT cudaError_t cudaMallocFromPoolAsync_ptsz(void** p, size_t size, cudaMemPool_t pool,
                                                    cudaStream_t stream) {
    return runtimeAlloc(
        Api::cudaMallocFromPoolAsync_ptsz, Kind::Pool, p, size, 0,
        [&] { return callReal(runtimeReal().cudaMallocFromPoolAsync_ptsz, p, size, pool, stream); },
        u64(pool), stream);
}

GMT_EXPORT cudaError_t cudaFreeAsync(void* p, cudaStream_t stream) {
    return runtimeFree(
        Api::cudaFreeAsync, Kind::Pool, p,
        [&] { return callReal(runtimeReal().cudaFreeAsync, p, stream); }, stream);
}

GMT_EXPORT cudaError_t cudaFreeAsync_ptsz(void* p, cudaStream_t stream) {
    return runtimeFree(
        Api::cudaFreeAsync_ptsz, Kind::Pool, p,
        [&] { return callReal(runtimeReal().cudaFreeAsync_ptsz, p, stream); }, stream);
}

GMT_EXPORT cudaError_t cudaMallocManaged(void** p, size_t size, unsigned int flags) {
    return runtimeAlloc(Api::cudaMallocManaged, Kind::Managed, p, size, flags,
                        [&] { return callReal(runtimeReal().cudaMallocManaged, p, size, flags); });
}

GMT_EXPORT cudaError_t cudaMallocHost(void** p, size_t size) {
    return runtimeAlloc(Api::cudaMallocHost, Kind::HostPinned, p, size, 0,
                        [&] { return callReal(runtimeReal().cudaMallocHost, p, size); });
}

GMT_EXPORT cudaError_t cudaHostAlloc(void** p, size_t size, unsigned int flags) {
    return runtimeAlloc(Api::cudaHostAlloc, Kind::HostPinned, p, size, flags,
                        [&] { return callReal(runtimeReal().cudaHostAlloc, p, size, flags); });
}

GMT_EXPORT cudaError_t cudaFreeHost(void* p) {
    return runtimeFree(Api::cudaFreeHost, Kind::HostPinned, p,
                       [&] { return callReal(runtimeReal().cudaFreeHost, p); });
}

GMT_EXPORT cudaError_t cudaHostRegister(void* p, size_t size, unsigned int flags) {
    void* out = p;
    return runtimeAlloc(Api::cudaHostRegister, Kind::HostPinned, &out, size, flags,
                        [&] { return callReal(runtimeReal().cudaHostRegister, p, size, flags); });
}

GMT_EXPORT cudaError_t cudaHostUnregister(void* p) {
    return runtimeFree(Api::cudaHostUnregister, Kind::HostPinned, p,
                       [&] { return callReal(runtimeReal().cudaHostUnregister, p); });
}

GMT_EXPORT cudaError_t cudaMallocArray(cudaArray_t* array, const cudaChannelFormatDesc* desc,
                                       size_t width, size_t height, unsigned int flags) {
    uint64_t bytes = desc ? arrayBytes(*desc, cudaExtent{width, height, 0}) : 0;
    return runtimeArray(Api::cudaMallocArray, array, bytes, [&] {
        return callReal(runtimeReal().cudaMallocArray, array, desc, width, height, flags);
    });
}

GMT_EXPORT cudaError_t cudaMalloc3DArray(cudaArray_t* array, const cudaChannelFormatDesc* desc,
                                         cudaExtent extent, unsigned int flags) {
    uint64_t bytes = desc ? arrayBytes(*desc, extent) : 0;
    return runtimeArray(Api::cudaMalloc3DArray, array, bytes, [&] {
        return callReal(runtimeReal().cudaMalloc3DArray, array, desc, extent, flags);
    });
}

GMT_EXPORT cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t* array,
                                                const cudaChannelFormatDesc* desc,
                                                cudaExtent extent, unsigned int levels,
                                                unsigned int flags) {
    uint64_t bytes = desc ? arrayBytes(*desc, extent, levels) : 0;
    return runtimeArray(Api::cudaMallocMipmappedArray, array, bytes, [&] {
        return callReal(runtimeReal().cudaMallocMipmappedArray, array, desc, extent, levels, flags);
    });
}

GMT_EXPORT cudaError_t cudaFreeArray(cudaArray_t array) {
    return runtimeFree(Api::cudaFreeArray, Kind::Array, array,
                       [&] { return callReal(runtimeReal().cudaFreeArray, array); });
}

GMT_EXPORT cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t array) {
    return runtimeFree(Api::cudaFreeMipmappedArray, Kind::Array, array,
                       [&] { return callReal(runtimeReal().cudaFreeMipmappedArray, array); });
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
