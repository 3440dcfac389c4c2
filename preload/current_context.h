// The calling thread's current context and its device, without asking the driver on every
// traced call. The answer is cached per thread and trusted until something that can change
// it happens, which the tracer sees because it wraps every such call:
//   - the calling thread switches contexts (cuCtxSetCurrent, cuCtxPushCurrent/PopCurrent,
//     cuCtxCreate, cudaSetDevice, cudaSetDeviceFlags, cudaInitDevice): its own epoch moves;
//   - any thread ends contexts (cuCtxDestroy, cuDevicePrimaryCtxRelease/Reset,
//     cudaDeviceReset), after which a handle may be recycled: a global generation moves.
// Nothing is cached while the thread has no context, so the runtime's lazy creation of its
// context inside the first call is seen by the next one. A fork starts a new generation.
#pragma once

#include "real_functions.h"

#include <atomic>
#include <cstdint>

namespace gmt::preload {

inline std::atomic<uint64_t> g_context_generation{1};

struct ContextCache {
    uint64_t generation; // 0: empty
    uint64_t epoch;
    CUcontext context;
    int16_t device;
};
inline thread_local ContextCache t_context_cache __attribute__((tls_model("initial-exec")));
inline thread_local uint64_t t_context_epoch __attribute__((tls_model("initial-exec"))) = 0;

// The calling thread may have a different current context now.
inline void contextMayHaveChanged() {
    ++t_context_epoch;
}

// Contexts may have ended, on any thread.
inline void contextsMayHaveEnded() {
    g_context_generation.fetch_add(1, std::memory_order_acq_rel);
}

// Whether the thread's cache already holds `ctx` as current: switching to it changes
// nothing (runtimes may set the context they want before every call).
inline bool cachedAsCurrent(CUcontext ctx) {
    const ContextCache& cache = t_context_cache;
    return cache.context == ctx && cache.epoch == t_context_epoch &&
           cache.generation == g_context_generation.load(std::memory_order_acquire);
}

// The calling thread's current context and its device ordinal; false when it has none (or
// the driver cannot say). Asks the driver itself, never the runtime, whose last-error state
// the program may be watching.
inline bool currentContext(CUcontext& context, int16_t& device) {
    ContextCache& cache = t_context_cache;
    const uint64_t generation = g_context_generation.load(std::memory_order_acquire);
    if (cache.generation == generation && cache.epoch == t_context_epoch) [[likely]] {
        context = cache.context;
        device = cache.device;
        return true;
    }
    const RealFunctions& cu = driverReal();
    CUcontext ctx = nullptr;
    CUdevice dev = 0;
    if (!cu.cuCtxGetCurrent || cu.cuCtxGetCurrent(&ctx) != CUDA_SUCCESS || ctx == nullptr ||
        !cu.cuCtxGetDevice || cu.cuCtxGetDevice(&dev) != CUDA_SUCCESS) {
        return false;
    }
    cache = {generation, t_context_epoch, ctx, static_cast<int16_t>(dev)};
    context = ctx;
    device = cache.device;
    return true;
}

} // namespace gmt::preload
