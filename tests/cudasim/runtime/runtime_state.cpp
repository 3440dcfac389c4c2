#include "runtime_state.h"

#include "errors.h"

#include <cstdint>
#include <mutex>
#include <vector>

namespace cudasim::rt {

namespace {

// The primary contexts the runtime holds a retain on, and how many times each device was reset
// (a thread whose binding predates a reset must bind again).
struct Primaries {
    std::mutex mutex;
    std::vector<CUcontext> contexts; // null: not retained (never, or since a reset)
    std::vector<uint64_t> resets;
};

Primaries& primaries() {
    static Primaries* p = new Primaries();
    return *p;
}

struct ThreadState {
    int device = 0;            // what cudaSetDevice chose
    CUcontext bound = nullptr; // the primary context this thread made current
    int bound_device = -1;
    uint64_t bound_resets = 0; // the device's reset count when it was bound
};

ThreadState& thread_state() {
    thread_local ThreadState state;
    return state;
}

// Call with the mutex held.
cudaError_t ensure_table(const DriverApi& api, Primaries& p) {
    if (!p.contexts.empty()) {
        return cudaSuccess;
    }
    int count = 0;
    if (CUresult r = api.cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
        return to_runtime_error(r);
    }
    p.contexts.assign(static_cast<size_t>(count), nullptr);
    p.resets.assign(static_cast<size_t>(count), 0);
    return cudaSuccess;
}

// Retains `device`'s primary context if the runtime does not hold it, and makes it current.
cudaError_t bind(const DriverApi& api, int device) {
    Primaries& p = primaries();
    std::lock_guard<std::mutex> lock(p.mutex);
    if (cudaError_t e = ensure_table(api, p); e != cudaSuccess) {
        return e;
    }
    if (device < 0 || device >= static_cast<int>(p.contexts.size())) {
        return cudaErrorInvalidDevice;
    }
    if (p.contexts[device] == nullptr) {
        CUcontext ctx = nullptr;
        if (CUresult r = api.cuDevicePrimaryCtxRetain(&ctx, device); r != CUDA_SUCCESS) {
            return to_runtime_error(r);
        }
        p.contexts[device] = ctx;
    }
    if (CUresult r = api.cuCtxSetCurrent(p.contexts[device]); r != CUDA_SUCCESS) {
        return to_runtime_error(r);
    }
    ThreadState& t = thread_state();
    t.bound = p.contexts[device];
    t.bound_device = device;
    t.bound_resets = p.resets[device];
    return cudaSuccess;
}

bool binding_outdated(const ThreadState& t) {
    Primaries& p = primaries();
    std::lock_guard<std::mutex> lock(p.mutex);
    return t.bound_device >= 0 && t.bound_resets != p.resets[t.bound_device];
}

} // namespace

cudaError_t driver(const DriverApi** api) {
    return load_driver(api);
}

cudaError_t ensure_context(const DriverApi** api) {
    if (cudaError_t e = load_driver(api); e != cudaSuccess) {
        return e;
    }
    CUcontext current = nullptr;
    if (CUresult r = (*api)->cuCtxGetCurrent(&current); r != CUDA_SUCCESS) {
        return to_runtime_error(r);
    }
    ThreadState& t = thread_state();
    if (current != nullptr && !(current == t.bound && binding_outdated(t))) {
        return cudaSuccess;
    }
    return bind(**api, t.device);
}

cudaError_t device_count(int* count) {
    const DriverApi* api = nullptr;
    if (cudaError_t e = load_driver(&api); e != cudaSuccess) {
        return e;
    }
    return to_runtime_error(api->cuDeviceGetCount(count));
}

cudaError_t select_device(int device) {
    const DriverApi* api = nullptr;
    if (cudaError_t e = load_driver(&api); e != cudaSuccess) {
        return e;
    }
    if (cudaError_t e = bind(*api, device); e != cudaSuccess) {
        return e;
    }
    thread_state().device = device;
    return cudaSuccess;
}

cudaError_t current_device(int* device) {
    const DriverApi* api = nullptr;
    if (cudaError_t e = load_driver(&api); e != cudaSuccess) {
        return e;
    }
    // A context made current through the driver API decides, as in the real runtime.
    CUcontext current = nullptr;
    if (api->cuCtxGetCurrent(&current) == CUDA_SUCCESS && current != nullptr &&
        current != thread_state().bound) {
        CUdevice owner = 0;
        if (api->cuCtxGetDevice(&owner, current) == CUDA_SUCCESS) {
            *device = owner;
            return cudaSuccess;
        }
    }
    *device = thread_state().device;
    return cudaSuccess;
}

cudaError_t reset_device(int device) {
    const DriverApi* api = nullptr;
    if (cudaError_t e = load_driver(&api); e != cudaSuccess) {
        return e;
    }
    Primaries& p = primaries();
    std::lock_guard<std::mutex> lock(p.mutex);
    if (cudaError_t e = ensure_table(*api, p); e != cudaSuccess) {
        return e;
    }
    if (device < 0 || device >= static_cast<int>(p.contexts.size())) {
        return cudaErrorInvalidDevice;
    }
    // The reset frees what the context owned; the runtime then gives up its retain (on an H200
    // the retain count after cudaDeviceReset shows NVIDIA's runtime does) and retains afresh
    // on next use.
    if (CUresult r = api->cuDevicePrimaryCtxReset(device); r != CUDA_SUCCESS) {
        return to_runtime_error(r);
    }
    if (p.contexts[device] != nullptr) {
        api->cuDevicePrimaryCtxRelease(device);
        p.contexts[device] = nullptr;
    }
    ++p.resets[device];
    return cudaSuccess;
}

} // namespace cudasim::rt
