// Where the real CUDA functions are. Driver functions come from libcuda itself (found
// with RTLD_NOLOAD, so the tracer never loads it), runtime functions from the next
// definition after the tracer or from an already loaded libcudart. Resolution is lazy:
// nothing here runs before the application has loaded CUDA.
#pragma once

#include "hooked_functions.h"

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

// Resolves (once it can) and returns the real functions. A pointer stays null when its
// library is not loaded.
const RealFunctions& driverReal();
const RealFunctions& runtimeReal();

// Pointer identity: the tracer's wrapper when `fn` is the real address of a wrapped
// driver function (cuGetProcAddress results), else `fn` unchanged.
void* substituteDriverPointer(void* fn);

// For dlsym through a library handle: the wrapper when `name` is wrapped and `fn` is the
// real function the wrapper calls (or the wrapper itself), else `fn` unchanged.
void* substituteNamedPointer(const char* name, void* fn);

// True when `name` is one of the wrapped functions.
bool isWrappedName(const char* name);

} // namespace gmt::preload
