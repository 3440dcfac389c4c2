// Wrappers of the driver API (listed in preload/hooked_functions.h). Reached as exported
// symbols, through dlsym on a libcuda handle, and through cuGetProcAddress, which is how
// cudart and most frameworks reach them.
#include "allocation_calls.h"
#include "array_sizes.h"

using namespace gmt::preload;

GMT_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* dptr, size_t bytesize) {
    return traceAlloc<CUresult>(Api::cuMemAlloc_v2, Kind::Device, dptr, bytesize, 0, [&] {
        return callReal(driverReal().cuMemAlloc_v2, dptr, bytesize);
    });
}

GMT_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr* dptr, size_t* pPitch, size_t width,
                                       size_t height, unsigned int elem) {
    return tracePitchedAlloc<CUresult>(Api::cuMemAllocPitch_v2, dptr, pPitch, width, height, [&] {
        return callReal(driverReal().cuMemAllocPitch_v2, dptr, pPitch, width, height, elem);
    });
}

GMT_EXPORT CUresult cuMemFree_v2(CUdeviceptr dptr) {
    return traceFree<CUresult>(Api::cuMemFree_v2, Kind::Device, dptr,
                               [&] { return callReal(driverReal().cuMemFree_v2, dptr); });
}

GMT_EXPORT CUresult cuMemAllocAsync(CUdeviceptr* dptr, size_t bytesize, CUstream stream) {
    return traceAlloc<CUresult>(
        Api::cuMemAllocAsync, Kind::Pool, dptr, bytesize, 0,
        [&] { return callReal(driverReal().cuMemAllocAsync, dptr, bytesize, stream); }, 0, stream);
}

GMT_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr* dptr, size_t bytesize, CUstream stream) {
    return traceAlloc<CUresult>(
        Api::cuMemAllocAsync_ptsz, Kind::Pool, dptr, bytesize, 0,
        [&] { return callReal(driverReal().cuMemAllocAsync_ptsz, dptr, bytesize, stream); }, 0,
        stream);
}

GMT_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool,
                                            CUstream stream) {
    return traceAlloc<CUresult>(
        Api::cuMemAllocFromPoolAsync, Kind::Pool, dptr, bytesize, 0,
        [&] {
            return callReal(driverReal().cuMemAllocFromPoolAsync, dptr, bytesize, pool, stream);
        },
        u64(pool), stream);
}

GMT_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr* dptr, size_t bytesize,
                                                 CUmemoryPool pool, CUstream stream) {
    return traceAlloc<CUresult>(
        Api::cuMemAllocFromPoolAsync_ptsz, Kind::Pool, dptr, bytesize, 0,
        [&] {
            return callReal(driverReal().cuMemAllocFromPoolAsync_ptsz, dptr, bytesize, pool,
                            stream);
        },
        u64(pool), stream);
}

GMT_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream stream) {
    return traceFree<CUresult>(
        Api::cuMemFreeAsync, Kind::Pool, dptr,
        [&] { return callReal(driverReal().cuMemFreeAsync, dptr, stream); }, stream);
}

GMT_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream stream) {
    return traceFree<CUresult>(
        Api::cuMemFreeAsync_ptsz, Kind::Pool, dptr,
        [&] { return callReal(driverReal().cuMemFreeAsync_ptsz, dptr, stream); }, stream);
}

GMT_EXPORT CUresult cuMemAllocManaged(CUdeviceptr* dptr, size_t bytesize, unsigned int flags) {
    return traceAlloc<CUresult>(Api::cuMemAllocManaged, Kind::Managed, dptr, bytesize, flags, [&] {
        return callReal(driverReal().cuMemAllocManaged, dptr, bytesize, flags);
    });
}

GMT_EXPORT CUresult cuMemAllocHost_v2(void** pp, size_t bytesize) {
    return traceAlloc<CUresult>(Api::cuMemAllocHost_v2, Kind::HostPinned, pp, bytesize, 0, [&] {
        return callReal(driverReal().cuMemAllocHost_v2, pp, bytesize);
    });
}

GMT_EXPORT CUresult cuMemHostAlloc(void** pp, size_t bytesize, unsigned int flags) {
    return traceAlloc<CUresult>(Api::cuMemHostAlloc, Kind::HostPinned, pp, bytesize, flags, [&] {
        return callReal(driverReal().cuMemHostAlloc, pp, bytesize, flags);
    });
}

GMT_EXPORT CUresult cuMemFreeHost(void* p) {
    return traceFree<CUresult>(Api::cuMemFreeHost, Kind::HostPinned, u64(p),
                               [&] { return callReal(driverReal().cuMemFreeHost, p); });
}

GMT_EXPORT CUresult cuMemHostRegister_v2(void* p, size_t bytesize, unsigned int flags) {
    void* out = p;
    return traceAlloc<CUresult>(
        Api::cuMemHostRegister_v2, Kind::HostPinned, &out, bytesize, flags,
        [&] { return callReal(driverReal().cuMemHostRegister_v2, p, bytesize, flags); });
}

GMT_EXPORT CUresult cuMemHostUnregister(void* p) {
    return traceFree<CUresult>(Api::cuMemHostUnregister, Kind::HostPinned, u64(p),
                               [&] { return callReal(driverReal().cuMemHostUnregister, p); });
}

GMT_EXPORT CUresult cuArrayCreate_v2(CUarray* handle, const CUDA_ARRAY_DESCRIPTOR* desc) {
    return traceArrayCreate<CUresult>(
        Api::cuArrayCreate_v2, handle, desc ? arrayBytes(*desc) : 0,
        [&] { return callReal(driverReal().cuArrayCreate_v2, handle, desc); });
}

GMT_EXPORT CUresult cuArray3DCreate_v2(CUarray* handle, const CUDA_ARRAY3D_DESCRIPTOR* desc) {
    return traceArrayCreate<CUresult>(
        Api::cuArray3DCreate_v2, handle, desc ? arrayBytes(*desc) : 0,
        [&] { return callReal(driverReal().cuArray3DCreate_v2, handle, desc); });
}

GMT_EXPORT CUresult cuArrayDestroy(CUarray handle) {
    return traceFree<CUresult>(Api::cuArrayDestroy, Kind::Array, u64(handle),
                               [&] { return callReal(driverReal().cuArrayDestroy, handle); });
}

GMT_EXPORT CUresult cuMipmappedArrayCreate(CUmipmappedArray* handle,
                                           const CUDA_ARRAY3D_DESCRIPTOR* desc,
                                           unsigned int levels) {
    return traceArrayCreate<CUresult>(
        Api::cuMipmappedArrayCreate, handle, desc ? arrayBytes(*desc, levels) : 0,
        [&] { return callReal(driverReal().cuMipmappedArrayCreate, handle, desc, levels); });
}

GMT_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray handle) {
    return traceFree<CUresult>(Api::cuMipmappedArrayDestroy, Kind::Array, u64(handle), [&] {
        return callReal(driverReal().cuMipmappedArrayDestroy, handle);
    });
}

namespace {
// A virtual-memory call that gives back an address range: the reservation, or a mapping in it.
template <typename Call>
CUresult releaseRange(Op op, Api api, CUdeviceptr ptr, size_t size, Call&& call) {
    return traceRelease<CUresult>(op, api, Kind::Vmm, call, [&](Event& e) {
        e.address = ptr;
        e.size = size;
    });
}
} // namespace

GMT_EXPORT CUresult cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment,
                                        CUdeviceptr addr, unsigned long long flags) {
    return traceCreate<CUresult>(
        Op::VmmReserve, Api::cuMemAddressReserve, Kind::Vmm,
        [&] {
            return callReal(driverReal().cuMemAddressReserve, ptr, size, alignment, addr, flags);
        },
        [&](Event& e, bool ok) {
            e.size = size;
            e.offset = alignment;
            e.flags = static_cast<uint32_t>(flags);
            if (ok) {
                e.address = *ptr;
            }
        });
}

GMT_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
    return releaseRange(Op::VmmAddressFree, Api::cuMemAddressFree, ptr, size,
                        [&] { return callReal(driverReal().cuMemAddressFree, ptr, size); });
}

GMT_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, size_t size,
                                const CUmemAllocationProp* prop, unsigned long long flags) {
    return traceCreate<CUresult>(
        Op::VmmCreate, Api::cuMemCreate, Kind::Vmm,
        [&] { return callReal(driverReal().cuMemCreate, handle, size, prop, flags); },
        [&](Event& e, bool ok) {
            e.size = size;
            if (ok) {
                e.handle = *handle;
            }
            if (prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE) {
                e.device = static_cast<int16_t>(prop->location.id);
            } else {
                // Host-located physical memory (CU_MEM_LOCATION_TYPE_HOST*) is not device memory.
                e.flags |= gmt::format::kFlagHostLocated;
            }
        });
}

GMT_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle) {
    return traceRelease<CUresult>(
        Op::VmmRelease, Api::cuMemRelease, Kind::Vmm,
        [&] { return callReal(driverReal().cuMemRelease, handle); },
        [&](Event& e) { e.handle = handle; });
}

GMT_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
                             CUmemGenericAllocationHandle handle, unsigned long long flags) {
    return traceCreate<CUresult>(
        Op::VmmMap, Api::cuMemMap, Kind::Vmm,
        [&] { return callReal(driverReal().cuMemMap, ptr, size, offset, handle, flags); },
        [&](Event& e, bool) {
            e.address = ptr;
            e.size = size;
            e.offset = offset;
            e.handle = handle;
        });
}

GMT_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
    return releaseRange(Op::VmmUnmap, Api::cuMemUnmap, ptr, size,
                        [&] { return callReal(driverReal().cuMemUnmap, ptr, size); });
}

GMT_EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle,
                                                   void* osHandle, CUmemAllocationHandleType type) {
    return traceCreate<CUresult>(
        Op::VmmCreate, Api::cuMemImportFromShareableHandle, Kind::Vmm,
        [&] {
            return callReal(driverReal().cuMemImportFromShareableHandle, handle, osHandle, type);
        },
        [&](Event& e, bool ok) {
            // The memory belongs to the process that created it; its size is not known to
            // an importer (the analyzer takes it from the mappings). Where it lives is.
            e.flags = gmt::format::kFlagImported;
            if (!ok) {
                return;
            }
            e.handle = *handle;
            const RealFunctions& cu = driverReal();
            CUmemAllocationProp prop{};
            if (cu.cuMemGetAllocationPropertiesFromHandle &&
                cu.cuMemGetAllocationPropertiesFromHandle(&prop, *handle) == CUDA_SUCCESS) {
                if (prop.location.type == CU_MEM_LOCATION_TYPE_DEVICE) {
                    e.device = static_cast<int16_t>(prop.location.id);
                } else {
                    e.flags |= gmt::format::kFlagHostLocated;
                }
            }
        });
}

// One more reference to the handle mapped at `addr` (NCCL frees its buffers this way: retain
// by address, release twice). Without it, the second release looks like a bad free.
GMT_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr) {
    return traceCreate<CUresult>(
        Op::VmmRetain, Api::cuMemRetainAllocationHandle, Kind::Vmm,
        [&] { return callReal(driverReal().cuMemRetainAllocationHandle, handle, addr); },
        [&](Event& e, bool ok) {
            e.address = u64(addr);
            if (ok && handle) {
                e.handle = *handle;
            }
        });
}

GMT_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev) {
    return traceRelease<CUresult>(
        Op::Teardown, Api::cuDevicePrimaryCtxReset_v2, Kind::None,
        [&] {
            return endingContexts(
                [&] { return callReal(driverReal().cuDevicePrimaryCtxReset_v2, dev); });
        },
        [&](Event& e) { e.device = static_cast<int16_t>(dev); });
}

GMT_EXPORT CUresult cuCtxDestroy_v2(CUcontext ctx) {
    return traceRelease<CUresult>(
        Op::Teardown, Api::cuCtxDestroy_v2, Kind::None,
        [&] { return endingContexts([&] { return callReal(driverReal().cuCtxDestroy_v2, ctx); }); },
        [&](Event& e) { e.context = u64(ctx); });
}

namespace {
template <typename Call> CUresult ctxCreate(Api api, CUcontext* pctx, CUdevice dev, Call&& call) {
    return traceCreate<CUresult>(
        Op::CtxCreate, api, Kind::None, [&] { return switchingContext(call); },
        [&](Event& e, bool ok) {
            e.device = static_cast<int16_t>(dev);
            if (ok) {
                e.context = u64(*pctx);
            }
        });
}
} // namespace

GMT_EXPORT CUresult cuCtxCreate_v2(CUcontext* pctx, unsigned int flags, CUdevice dev) {
    return ctxCreate(Api::cuCtxCreate_v2, pctx, dev,
                     [&] { return callReal(driverReal().cuCtxCreate_v2, pctx, flags, dev); });
}

GMT_EXPORT CUresult cuCtxCreate_v4(CUcontext* pctx, CUctxCreateParams* params, unsigned int flags,
                                   CUdevice dev) {
    return ctxCreate(Api::cuCtxCreate_v4, pctx, dev, [&] {
        return callReal(driverReal().cuCtxCreate_v4, pctx, params, flags, dev);
    });
}

GMT_EXPORT CUresult cuMemPoolCreate(CUmemoryPool* pool, const CUmemPoolProps* props) {
    return tracePoolCreate<CUresult>(Api::cuMemPoolCreate, pool, props, [&] {
        return callReal(driverReal().cuMemPoolCreate, pool, props);
    });
}

GMT_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool) {
    return tracePoolDestroy<CUresult>(
        Api::cuMemPoolDestroy, pool, [&] { return callReal(driverReal().cuMemPoolDestroy, pool); });
}

GMT_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep) {
    return tracePoolTrim<CUresult>(Api::cuMemPoolTrimTo, pool, keep, [&] {
        return callReal(driverReal().cuMemPoolTrimTo, pool, keep);
    });
}

// Calls that change which context is current on the calling thread, or end contexts:
// wrapped only so that the per-thread context cache (current_context.h) forgets.
GMT_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
    CUresult r = callReal(driverReal().cuCtxSetCurrent, ctx);
    if (r != CUDA_SUCCESS || !cachedAsCurrent(ctx)) {
        contextMayHaveChanged();
    }
    return r;
}

GMT_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
    return switchingContext([&] { return callReal(driverReal().cuCtxPushCurrent_v2, ctx); });
}

GMT_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext* pctx) {
    return switchingContext([&] { return callReal(driverReal().cuCtxPopCurrent_v2, pctx); });
}

GMT_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
    return endingContexts([&] { return callReal(driverReal().cuDevicePrimaryCtxRelease_v2, dev); });
}
