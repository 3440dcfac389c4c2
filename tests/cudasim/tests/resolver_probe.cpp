// A miniature tracer, preloaded into a test program, that proves the simulated runtime reaches
// its driver the way docs/architecture.md says the real one does: one dlsym of
// cuGetProcAddress_v2, then the resolver obtained for "cuGetProcAddress" for everything else.
//
// It interposes dlsym, substitutes its own bootstrap resolver, which substitutes its own
// resolver for "cuGetProcAddress", which wraps a few allocation functions with call counters.
// The program reads the counters through cudasim_probe_report().
//
// Forwarding dlsym changes who the caller is for RTLD_NEXT look-ups; nothing in the test
// programs uses RTLD_NEXT, so the probe ignores that (a real tracer must not).
#include <cuda.h>
#include <cudaTypedefs.h>

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "resolver_probe.h"

namespace {

using DlsymFn = void* (*)(void*, const char*);

DlsymFn real_dlsym() {
    static DlsymFn fn = [] {
        auto f = reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"));
        return f != nullptr ? f
                            : reinterpret_cast<DlsymFn>(dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5"));
    }();
    return fn;
}

std::mutex mutex;
cudasim_probe_report_t report;
PFN_cuGetProcAddress_v12000 real_bootstrap = nullptr;
PFN_cuGetProcAddress_v12000 real_resolver = nullptr;
PFN_cuMemAlloc_v3020 real_mem_alloc = nullptr;
PFN_cuMemFree_v3020 real_mem_free = nullptr;
PFN_cuMemAllocAsync_v11020 real_alloc_async = nullptr;
PFN_cuMemFreeAsync_v11020 real_free_async = nullptr;
PFN_cuMemHostAlloc_v2020 real_host_alloc = nullptr;
PFN_cuMemFreeHost_v2000 real_free_host = nullptr;
PFN_cuMemAllocManaged_v6000 real_alloc_managed = nullptr;

void append(char (*list)[64], int* count, const char* name) {
    if (*count < CUDASIM_PROBE_MAX_NAMES) {
        std::strncpy(list[*count], name, 63);
        list[*count][63] = '\0';
    }
    ++*count;
}

CUresult mem_alloc(CUdeviceptr* p, size_t size) {
    ++report.mem_alloc_calls;
    return real_mem_alloc(p, size);
}
CUresult mem_free(CUdeviceptr p) {
    ++report.mem_free_calls;
    return real_mem_free(p);
}
CUresult alloc_async(CUdeviceptr* p, size_t size, CUstream s) {
    ++report.alloc_async_calls;
    return real_alloc_async(p, size, s);
}
CUresult free_async(CUdeviceptr p, CUstream s) {
    ++report.free_async_calls;
    return real_free_async(p, s);
}
CUresult host_alloc(void** p, size_t size, unsigned flags) {
    ++report.host_alloc_calls;
    return real_host_alloc(p, size, flags);
}
CUresult free_host(void* p) {
    ++report.free_host_calls;
    return real_free_host(p);
}
CUresult alloc_managed(CUdeviceptr* p, size_t size, unsigned flags) {
    ++report.alloc_managed_calls;
    return real_alloc_managed(p, size, flags);
}

// Swaps `*pfn` for `wrapper` when the driver handed out the function to be wrapped.
template <typename Pfn> void wrap(void** pfn, Pfn* real, Pfn wrapper) {
    *real = reinterpret_cast<Pfn>(*pfn);
    *pfn = reinterpret_cast<void*>(wrapper);
}

CUresult resolver(const char* symbol, void** pfn, int version, cuuint64_t flags,
                  CUdriverProcAddressQueryResult* status) {
    CUresult result = real_resolver(symbol, pfn, version, flags, status);
    std::lock_guard<std::mutex> lock(mutex);
    append(report.resolved, &report.resolved_count, symbol);
    if (result != CUDA_SUCCESS || (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)) {
        return result;
    }
    std::string name(symbol);
    if (name == "cuMemAlloc") {
        wrap(pfn, &real_mem_alloc, &mem_alloc);
    } else if (name == "cuMemFree") {
        wrap(pfn, &real_mem_free, &mem_free);
    } else if (name == "cuMemAllocAsync") {
        wrap(pfn, &real_alloc_async, &alloc_async);
    } else if (name == "cuMemFreeAsync") {
        wrap(pfn, &real_free_async, &free_async);
    } else if (name == "cuMemHostAlloc") {
        wrap(pfn, &real_host_alloc, &host_alloc);
    } else if (name == "cuMemFreeHost") {
        wrap(pfn, &real_free_host, &free_host);
    } else if (name == "cuMemAllocManaged") {
        wrap(pfn, &real_alloc_managed, &alloc_managed);
    } else if (name == "cuGetProcAddress") {
        *pfn = reinterpret_cast<void*>(&resolver);
    }
    return result;
}

CUresult bootstrap(const char* symbol, void** pfn, int version, cuuint64_t flags,
                   CUdriverProcAddressQueryResult* status) {
    CUresult result = real_bootstrap(symbol, pfn, version, flags, status);
    std::lock_guard<std::mutex> lock(mutex);
    append(report.bootstrap, &report.bootstrap_count, symbol);
    if (report.bootstrap_count == 1) {
        report.empty_symbol_result = result;
        report.empty_symbol_found = *pfn != nullptr;
    }
    // Only the 12000 answer is the 5-argument resolver this wrapper can stand in for.
    if (result == CUDA_SUCCESS && *pfn != nullptr && version >= 12000 &&
        std::strcmp(symbol, "cuGetProcAddress") == 0) {
        report.resolver_version = version;
        real_resolver = reinterpret_cast<PFN_cuGetProcAddress_v12000>(*pfn);
        *pfn = reinterpret_cast<void*>(&resolver);
    }
    return result;
}

} // namespace

extern "C" {

void* dlsym(void* handle, const char* symbol) {
    void* found = real_dlsym()(handle, symbol);
    if (std::strncmp(symbol, "cu", 2) == 0) {
        std::lock_guard<std::mutex> lock(mutex);
        append(report.dlsym, &report.dlsym_count, symbol);
        if (found != nullptr && std::strcmp(symbol, "cuGetProcAddress_v2") == 0) {
            real_bootstrap = reinterpret_cast<PFN_cuGetProcAddress_v12000>(found);
            return reinterpret_cast<void*>(&bootstrap);
        }
    }
    return found;
}

const cudasim_probe_report_t* cudasim_probe_report() {
    return &report;
}
}
