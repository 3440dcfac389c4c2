#include "real_functions.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <string_view>

// The wrappers themselves (defined in hooks/), so their addresses can be handed out.
extern "C" {
#define GMT_DECLARE_WRAPPER(ret, name, params, args) ret name params;
GMT_DRIVER_HOOKS(GMT_DECLARE_WRAPPER)
GMT_RUNTIME_HOOKS(GMT_DECLARE_WRAPPER)
#undef GMT_DECLARE_WRAPPER
}

namespace gmt::preload {

namespace detail {
RealFunctions g_driver;
RealFunctions g_runtime;
std::atomic<bool> g_driver_ready{false};
std::atomic<bool> g_runtime_ready{false};
} // namespace detail

namespace {
using detail::g_driver;
using detail::g_driver_ready;
using detail::g_runtime;
using detail::g_runtime_ready;

std::atomic<DlsymFn> g_real_dlsym{nullptr};

std::mutex g_resolve_mutex;

struct NamedEntry {
    std::string_view name;
    void* wrapper;
    void* (*real)(); // the function the wrapper calls, once it can be resolved
};

const std::array kWrapped = {
#define GMT_DRIVER_ENTRY(ret, name, params, args)                                                  \
    NamedEntry{#name, reinterpret_cast<void*>(&::name),                                            \
               [] { return reinterpret_cast<void*>(driverReal().name); }},
#define GMT_RUNTIME_ENTRY(ret, name, params, args)                                                 \
    NamedEntry{#name, reinterpret_cast<void*>(&::name),                                            \
               [] { return reinterpret_cast<void*>(runtimeReal().name); }},
    GMT_DRIVER_HOOKS(GMT_DRIVER_ENTRY) GMT_RUNTIME_HOOKS(GMT_RUNTIME_ENTRY)
#undef GMT_DRIVER_ENTRY
#undef GMT_RUNTIME_ENTRY
};

// real address -> wrapper, for the driver; sorted once resolution succeeded.
struct IdentityEntry {
    void* real;
    void* wrapper;
};
std::array<IdentityEntry, kWrapped.size()> g_identity{};
size_t g_identity_size = 0;

void* findLibrary(std::initializer_list<const char*> sonames) {
    for (const char* soname : sonames) {
        if (void* h = dlopen(soname, RTLD_LAZY | RTLD_NOLOAD)) {
            return h;
        }
    }
    return nullptr;
}

void resolveDriverLocked() {
    void* libcuda = findLibrary({"libcuda.so.1", "libcuda.so"});
    void* from = libcuda ? libcuda : RTLD_NEXT;
#define GMT_RESOLVE(ret, name, params, args)                                                       \
    if (!g_driver.name)                                                                            \
        g_driver.name = reinterpret_cast<ret(*) params>(realDlsym(from, #name));
    GMT_DRIVER_HOOKS(GMT_RESOLVE)
    GMT_DRIVER_QUERIES(GMT_RESOLVE)
#undef GMT_RESOLVE
    if (!libcuda) {
        return; // try again later: CUDA may not be loaded yet
    }
    size_t n = 0;
#define GMT_IDENTITY(ret, name, params, args)                                                      \
    if (g_driver.name)                                                                             \
        g_identity[n++] = {reinterpret_cast<void*>(g_driver.name),                                 \
                           reinterpret_cast<void*>(&::name)};
    GMT_DRIVER_HOOKS(GMT_IDENTITY)
#undef GMT_IDENTITY
    std::sort(g_identity.begin(), g_identity.begin() + n,
              [](const IdentityEntry& a, const IdentityEntry& b) { return a.real < b.real; });
    g_identity_size = n;
    g_driver_ready.store(true, std::memory_order_release);
}

void resolveRuntimeLocked() {
    // PyTorch loads libcudart inside an RTLD_LOCAL scope where RTLD_NEXT cannot see it.
    void* libcudart = findLibrary({"libcudart.so.13", "libcudart.so.12", "libcudart.so"});
    bool found = false;
#define GMT_RESOLVE(ret, name, params, args)                                                       \
    if (!g_runtime.name) {                                                                         \
        void* fn = realDlsym(RTLD_NEXT, #name);                                                    \
        if (!fn && libcudart)                                                                      \
            fn = realDlsym(libcudart, #name);                                                      \
        g_runtime.name = reinterpret_cast<ret(*) params>(fn);                                      \
    }                                                                                              \
    found = found || g_runtime.name != nullptr;
    GMT_RUNTIME_HOOKS(GMT_RESOLVE)
#undef GMT_RESOLVE
    if (found) {
        g_runtime_ready.store(true, std::memory_order_release);
    }
}

} // namespace

DlsymFn realDlsymFunction() {
    DlsymFn fn = g_real_dlsym.load(std::memory_order_acquire);
    if (!fn) {
        fn = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"));
        if (!fn) {
            fn = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5"));
        }
        g_real_dlsym.store(fn, std::memory_order_release);
    }
    return fn;
}

void* realDlsym(void* handle, const char* name) {
    DlsymFn fn = realDlsymFunction();
    return fn ? fn(handle, name) : nullptr;
}

namespace {
// Double-checked: resolving takes the lock; once `ready` is set, no caller takes it again.
template <void (*ResolveLocked)()>
const RealFunctions& resolveOnce(const std::atomic<bool>& ready, const RealFunctions& table) {
    if (!ready.load(std::memory_order_acquire)) {
        std::lock_guard lock(g_resolve_mutex);
        if (!ready.load(std::memory_order_relaxed)) {
            ResolveLocked();
        }
    }
    return table;
}
} // namespace

const RealFunctions& detail::resolveDriver() {
    return resolveOnce<resolveDriverLocked>(g_driver_ready, g_driver);
}

const RealFunctions& detail::resolveRuntime() {
    return resolveOnce<resolveRuntimeLocked>(g_runtime_ready, g_runtime);
}

void* substituteDriverPointer(void* fn) {
    if (!fn) {
        return fn;
    }
    driverReal();
    if (!g_driver_ready.load(std::memory_order_acquire)) {
        return fn;
    }
    auto end = g_identity.begin() + g_identity_size;
    auto it = std::lower_bound(g_identity.begin(), end, fn,
                               [](const IdentityEntry& e, void* p) { return e.real < p; });
    return (it != end && it->real == fn) ? it->wrapper : fn;
}

void* substituteNamedPointer(const char* name, void* fn) {
    if (!fn || !name) {
        return fn;
    }
    for (const NamedEntry& e : kWrapped) {
        if (e.name != name) {
            continue;
        }
        if (fn == e.wrapper) {
            return fn;
        }
        return fn == e.real() ? e.wrapper : fn;
    }
    return fn;
}

bool isWrappedName(const char* name) {
    if (!name || (name[0] != 'c' || name[1] != 'u')) {
        return false;
    }
    return std::any_of(kWrapped.begin(), kWrapped.end(),
                       [&](const NamedEntry& e) { return e.name == name; });
}

} // namespace gmt::preload
