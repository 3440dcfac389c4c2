// Where the real CUDA functions are. Driver functions come from libcuda itself (found
// with RTLD_NOLOAD, so the tracer never loads it), runtime functions from the next
// definition after the tracer or from an already loaded libcudart. Resolution is lazy:
// nothing here runs before the application has loaded CUDA.
#pragma once

#include "hooked_functions.h"

#include <atomic>

namespace gmt::preload {

struct RealFunctions {
#define GMT_REAL_SLOT(ret, name, params, args) ret(*name) params = nullptr;
    GMT_DRIVER_HOOKS(GMT_REAL_SLOT)
    GMT_RUNTIME_HOOKS(GMT_REAL_SLOT)
    GMT_DRIVER_QUERIES(GMT_REAL_SLOT)
#undef GMT_REAL_SLOT
};

// The real dlsym, safe to call at any time, even before the tracer's constructor ran.
using DlsymFn = void* (*)(void*, const char*);
DlsymFn realDlsymFunction();
void* realDlsym(void* handle, const char* name);

namespace detail {
extern RealFunctions g_driver;
extern RealFunctions g_runtime;
extern std::atomic<bool> g_driver_ready;
extern std::atomic<bool> g_runtime_ready;
const RealFunctions& resolveDriver();
const RealFunctions& resolveRuntime();
} // namespace detail

// Resolves (once it can) and returns the real functions. A pointer stays null when its
// library is not loaded. Every wrapped call asks: after resolution, one load.
inline const RealFunctions& driverReal() {
    if (detail::g_driver_ready.load(std::memory_order_acquire)) [[likely]] {
        return detail::g_driver;
    }
    return detail::resolveDriver();
}
inline const RealFunctions& runtimeReal() {
    if (detail::g_runtime_ready.load(std::memory_order_acquire)) [[likely]] {
        return detail::g_runtime;
    }
    return detail::resolveRuntime();
}

// Pointer identity: the tracer's wrapper when `fn` is the real address of a wrapped
// driver function (cuGetProcAddress results), else `fn` unchanged.
void* substituteDriverPointer(void* fn);

// For dlsym through a library handle: the wrapper when `name` is wrapped and `fn` is the
// real function the wrapper calls (or the wrapper itself), else `fn` unchanged.
void* substituteNamedPointer(const char* name, void* fn);

// True when `name` is one of the wrapped functions.
bool isWrappedName(const char* name);

} // namespace gmt::preload
