// The shape every wrapper shares, so each wrapper in driver_hooks.cpp / runtime_hooks.cpp
// only says what is particular to its API: which real function, which event fields. The
// calls both APIs have (allocations, arrays, frees, pools) fill their events in
// allocation_calls.h.
#pragma once

#include "../current_context.h"
#include "../real_functions.h"
#include "../recorder.h"
#include "../reentrancy_guard.h"

#include <gpumemtrace/trace_format.h>

#include <atomic>
#include <cerrno>
#include <utility>

#define GMT_EXPORT extern "C" __attribute__((visibility("default")))

namespace gmt::preload {

using format::Api;
using format::Event;
using format::Kind;
using format::Op;

// An address or handle as the event stores it, whichever API handed it out: a pointer
// (void*, CUstream, CUarray, ...) or a CUdeviceptr.
inline uint64_t u64(const void* p) {
    return reinterpret_cast<uint64_t>(p);
}
inline uint64_t u64(CUdeviceptr p) {
    return p;
}

// CUDA_ERROR_OUT_OF_MEMORY and cudaErrorMemoryAllocation are both 2.
inline constexpr int kOutOfMemory = 2;

// The tracer's own work must not leak into errno, which the program may be about to read.
class ErrnoGuard {
  public:
    ErrnoGuard() : saved_(errno) {}
    ~ErrnoGuard() { errno = saved_; }

  private:
    int saved_;
};

// Device ordinal and context of the calling thread, from the per-thread cache of
// current_context.h.
inline void fillCurrentDevice(Event& e, bool with_context) {
    CUcontext ctx;
    int16_t device;
    if (currentContext(ctx, device)) {
        e.device = device;
        if (with_context) {
            e.context = u64(ctx);
        }
    }
}

// A call that may change the calling thread's current context. Nested inside a traced call
// (cudart switching contexts inside cudaMalloc) it still counts: the outer call fills its
// event after the real call returned.
template <typename Call> auto switchingContext(Call&& call) {
    auto r = call();
    contextMayHaveChanged();
    return r;
}

// A call that may end contexts (of any thread). Before and after: a thread that looks the
// context up while it ends must not keep the dying handle.
template <typename Call> auto endingContexts(Call&& call) {
    contextsMayHaveEnded();
    auto r = call();
    contextsMayHaveEnded();
    contextMayHaveChanged();
    return r;
}

// On out-of-memory, what the driver said was free right then: the first question a user
// asks about a failed allocation.
inline void fillOutOfMemory(Event& e) {
    if (e.result != kOutOfMemory) {
        return;
    }
    const RealFunctions& cu = driverReal();
    size_t free_bytes = 0, total = 0;
    if (cu.cuMemGetInfo_v2 && cu.cuMemGetInfo_v2(&free_bytes, &total) == CUDA_SUCCESS) {
        e.device_free = free_bytes;
        e.device_total = total;
    }
}

// A call that creates something: run it, then record what came back. `fill(e, ok)` sets
// the event's fields; out-parameters are read only when ok.
template <typename Result, typename Call, typename Fill>
Result traceCreate(Op op, Api api, Kind kind, Call&& call, Fill&& fill) {
    if (CallScope::nested()) {
        return call(); // inside a traced call (cudart's cudaMalloc calls cuMemAlloc): silent
    }
    CallScope scope;
    Result r = call();
    Recorder& recorder = Recorder::instance();
    if (scope.outermost() && recorder.active()) {
        ErrnoGuard keep_errno;
        Event e;
        e.op = op;
        e.api = api;
        e.kind = kind;
        e.result = static_cast<int32_t>(r);
        fill(e, static_cast<int>(r) == 0);
        fillOutOfMemory(e);
        recorder.record(e);
        recorder.pollFrameworks();
    }
    return r;
}

// A call that ends something: take a place in the sequence first, then run it, then
// commit the outcome. `fill(e)` sets the fields known before the call.
template <typename Result, typename Call, typename Fill>
Result traceRelease(Op op, Api api, Kind kind, Call&& call, Fill&& fill) {
    if (CallScope::nested()) {
        return call();
    }
    CallScope scope;
    Recorder& recorder = Recorder::instance();
    if (!scope.outermost() || !recorder.active()) {
        return call();
    }
    Event e;
    e.op = op;
    e.api = api;
    e.kind = kind;
    Recorder::Pending pending;
    {
        ErrnoGuard keep_errno;
        fill(e);
        pending = recorder.reserve(e);
    }
    Result r = call();
    ErrnoGuard keep_errno;
    e.result = static_cast<int32_t>(r);
    recorder.commit(pending, e);
    return r;
}

// Calls the real function, or fails the way a missing symbol does (CUDA_ERROR_NOT_FOUND
// and cudaErrorSymbolNotFound are both 500) when the library that defines it is not
// loaded: a lookup through RTLD_DEFAULT can find our wrapper in a program with a static
// cudart, and the wrapper must then not jump to nowhere.
template <typename R, typename... Params, typename... Args>
R callReal(R (*fn)(Params...), Args&&... args) {
    if (!fn) {
        return static_cast<R>(500);
    }
    return fn(std::forward<Args>(args)...);
}

} // namespace gmt::preload
