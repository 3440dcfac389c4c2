// The calls the runtime and the driver both have (allocations, pitched allocations, arrays,
// frees, pools), each traced one way: a wrapper in runtime_hooks.cpp or driver_hooks.cpp
// names its real function and hands its arguments over; what the event says about them is
// decided here, once for both APIs. Everything is a template over the result type
// (cudaError_t or CUresult) and inlines into the wrapper, as hook_support.h's tracers do.
#pragma once

#include "hook_support.h"

namespace gmt::preload {

// cudaMalloc / cuMemAlloc-like: *out (a void* or a CUdeviceptr) holds the address on
// success. Pool allocations have no context of their own (the pool has a device); pinned
// host memory is on no device.
template <typename Result, typename Address, typename Call>
Result traceAlloc(Api api, Kind kind, Address* out, size_t size, unsigned int flags, Call&& call,
                  uint64_t pool = 0, CUstream stream = nullptr) {
    return traceCreate<Result>(Op::Alloc, api, kind, call, [&](Event& e, bool ok) {
        e.size = size;
        e.flags = flags;
        e.handle = pool;
        e.stream = u64(stream);
        if (ok && out) {
            e.address = u64(*out);
        }
        fillCurrentDevice(e, kind != Kind::Pool);
        if (kind == Kind::HostPinned) {
            e.device = -1;
        }
    });
}

// cudaMallocPitch / cuMemAllocPitch: asked for width x height, got pitch x height.
template <typename Result, typename Address, typename Call>
Result tracePitchedAlloc(Api api, Address* out, size_t* pitch, size_t width, size_t height,
                         Call&& call) {
    return traceCreate<Result>(Op::Alloc, api, Kind::Device, call, [&](Event& e, bool ok) {
        e.size = static_cast<uint64_t>(width) * height;
        if (ok) {
            e.address = u64(*out);
            e.offset = *pitch;
            e.actual_size = static_cast<uint64_t>(*pitch) * height;
        }
        fillCurrentDevice(e, true);
    });
}

// Arrays are named by their handle, which stands in for the address; `bytes` comes from
// the descriptor (array_sizes.h).
template <typename Result, typename Handle, typename Call>
Result traceArrayCreate(Api api, Handle* handle, uint64_t bytes, Call&& call) {
    return traceCreate<Result>(Op::Alloc, api, Kind::Array, call, [&](Event& e, bool ok) {
        e.size = bytes;
        if (ok && handle) {
            e.address = u64(*handle);
        }
        fillCurrentDevice(e, true);
    });
}

// Freeing NULL is a documented no-op: no event, no error. `stream` is that of an
// asynchronous free.
template <typename Result, typename Call>
Result traceFree(Api api, Kind kind, uint64_t address, Call&& call, CUstream stream = nullptr) {
    if (address == 0) {
        CallScope scope;
        return call();
    }
    return traceRelease<Result>(Op::Free, api, kind, call, [&](Event& e) {
        e.address = address;
        e.stream = u64(stream);
    });
}

// Pools: the runtime and the driver hand the same handle type around (cudaMemPool_t is
// CUmemoryPool), and both property structs say "on device N" the same way.
template <typename Result, typename Props, typename Call>
Result tracePoolCreate(Api api, CUmemoryPool* pool, const Props* props, Call&& call) {
    return traceCreate<Result>(Op::PoolCreate, api, Kind::Pool, call, [&](Event& e, bool ok) {
        if (ok) {
            e.handle = u64(*pool);
        }
        if (props && static_cast<int>(props->location.type) ==
                         static_cast<int>(CU_MEM_LOCATION_TYPE_DEVICE)) {
            e.device = static_cast<int16_t>(props->location.id);
        }
    });
}

template <typename Result, typename Call>
Result tracePoolDestroy(Api api, CUmemoryPool pool, Call&& call) {
    return traceRelease<Result>(Op::PoolDestroy, api, Kind::Pool, call,
                                [&](Event& e) { e.handle = u64(pool); });
}

template <typename Result, typename Call>
Result tracePoolTrim(Api api, CUmemoryPool pool, size_t keep, Call&& call) {
    return traceRelease<Result>(Op::PoolTrim, api, Kind::Pool, call, [&](Event& e) {
        e.handle = u64(pool);
        e.size = keep;
    });
}

} // namespace gmt::preload
