// What every exported runtime function starts with.
#pragma once

#include "driver_api.h"
#include "errors.h"
#include "runtime_state.h"

// Declares `api` and makes sure the calling thread has a current context, or returns the
// error (recorded as the thread's last error).
#define CUDASIM_WITH_CONTEXT(api)                                                                  \
    const ::cudasim::rt::DriverApi* api = nullptr;                                                 \
    if (cudaError_t cudasim_error_ = ::cudasim::rt::ensure_context(&api);                          \
        cudasim_error_ != cudaSuccess) {                                                           \
        return ::cudasim::rt::finish(cudasim_error_);                                              \
    }

// Declares `api` (the driver is loaded and initialized) without needing a context.
#define CUDASIM_WITH_DRIVER(api)                                                                   \
    const ::cudasim::rt::DriverApi* api = nullptr;                                                 \
    if (cudaError_t cudasim_error_ = ::cudasim::rt::driver(&api); cudasim_error_ != cudaSuccess) { \
        return ::cudasim::rt::finish(cudasim_error_);                                              \
    }

// A driver function the loaded driver lacks makes the runtime call unsupported, not a crash.
#define CUDASIM_REQUIRE(api, function)                                                             \
    if ((api)->function == nullptr) {                                                              \
        return ::cudasim::rt::finish(cudaErrorNotSupported);                                       \
    }
