// Runs under LD_PRELOAD=libcudasim_resolver_probe.so and checks, from the probe's report, that
// every runtime allocation reached the driver through the wrapped cuGetProcAddress.
#include "resolver_probe.h"

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstring>

// Weak: without the probe preloaded, the program says so instead of failing to start.
extern "C" __attribute__((weak)) const cudasim_probe_report_t* cudasim_probe_report();

namespace {

int failures = 0;

void expect(bool condition, const char* what) {
    if (!condition) {
        std::fprintf(stderr, "FAILED: %s\n", what);
        ++failures;
    }
}

} // namespace

int main() {
    if (cudasim_probe_report == nullptr) {
        std::fprintf(stderr, "the resolver probe is not preloaded\n");
        return 2;
    }
    void* a = nullptr;
    void* b = nullptr;
    void* c = nullptr;
    void* async = nullptr;
    void* pinned = nullptr;
    void* managed = nullptr;
    expect(cudaMalloc(&a, 11001) == cudaSuccess, "cudaMalloc");
    expect(cudaMalloc(&b, 1234567) == cudaSuccess, "cudaMalloc");
    expect(cudaMalloc(&c, 3 << 20) == cudaSuccess, "cudaMalloc");
    expect(cudaMallocAsync(&async, 4096, nullptr) == cudaSuccess, "cudaMallocAsync");
    expect(cudaMallocHost(&pinned, 4096) == cudaSuccess, "cudaMallocHost");
    expect(cudaMallocManaged(&managed, 4096) == cudaSuccess, "cudaMallocManaged");
    expect(cudaFree(a) == cudaSuccess && cudaFree(b) == cudaSuccess && cudaFree(c) == cudaSuccess,
           "cudaFree");
    expect(cudaFreeAsync(async, nullptr) == cudaSuccess, "cudaFreeAsync");
    expect(cudaFreeHost(pinned) == cudaSuccess, "cudaFreeHost");
    expect(cudaFree(managed) == cudaSuccess, "cudaFree(managed)");

    // What PyTorch does for its VMM functions goes through the wrapped resolver too.
    void* entry = nullptr;
    cudaDriverEntryPointQueryResult status{};
    expect(cudaGetDriverEntryPointByVersion("cuMemAlloc", &entry, 12000, cudaEnableDefault,
                                            &status) == cudaSuccess,
           "cudaGetDriverEntryPointByVersion");

    const cudasim_probe_report_t& r = *cudasim_probe_report();
    for (int i = 0; i < r.dlsym_count && i < CUDASIM_PROBE_MAX_NAMES; ++i) {
        std::printf("dlsym: %s\n", r.dlsym[i]);
    }
    for (int i = 0; i < r.bootstrap_count && i < CUDASIM_PROBE_MAX_NAMES; ++i) {
        std::printf("bootstrap: '%s'\n", r.bootstrap[i]);
    }
    std::printf("resolver asked for %d names (cuGetProcAddress at version %d)\n", r.resolved_count,
                r.resolver_version);

    expect(r.dlsym_count == 1 && std::strcmp(r.dlsym[0], "cuGetProcAddress_v2") == 0,
           "the runtime dlsym's cuGetProcAddress_v2 and no other driver function");
    // What NVIDIA's runtime asks (seen on an H200 with CUDA 13.0), in order.
    expect(r.bootstrap_count == 4 && std::strcmp(r.bootstrap[0], "") == 0 &&
               std::strcmp(r.bootstrap[1], "cuInit") == 0 &&
               std::strcmp(r.bootstrap[2], "cuGetProcAddress") == 0 &&
               std::strcmp(r.bootstrap[3], "cuGetProcAddress") == 0,
           "the questions are \"\", cuInit, cuGetProcAddress (11030), cuGetProcAddress (12000)");
    expect(r.empty_symbol_result == CUDA_SUCCESS && !r.empty_symbol_found,
           "\"\" is answered with success and no function");
    expect(r.resolver_version == 12000, "cuGetProcAddress is asked for at version 12000");
    expect(r.resolved_count > 20, "everything else comes from the returned resolver");
    expect(r.mem_alloc_calls == 3, "3 cudaMalloc -> 3 cuMemAlloc_v2 through the wrapper");
    expect(r.mem_free_calls == 4, "4 cudaFree -> 4 cuMemFree_v2 through the wrapper");
    expect(r.alloc_async_calls == 1 && r.free_async_calls == 1,
           "cudaMallocAsync/cudaFreeAsync -> cuMemAllocAsync/cuMemFreeAsync");
    expect(r.host_alloc_calls == 1 && r.free_host_calls == 1,
           "cudaMallocHost/cudaFreeHost -> cuMemHostAlloc/cuMemFreeHost");
    expect(r.alloc_managed_calls == 1, "cudaMallocManaged -> cuMemAllocManaged");
    // The entry point is the tracer's wrapper, so calls through it are seen too.
    CUdeviceptr through_entry = 0;
    expect(entry != nullptr && reinterpret_cast<CUresult (*)(CUdeviceptr*, size_t)>(entry)(
                                   &through_entry, 256) == CUDA_SUCCESS,
           "the entry point works");
    expect(r.mem_alloc_calls == 4, "the entry point is the wrapper");
    expect(cudaFree(reinterpret_cast<void*>(through_entry)) == cudaSuccess, "cudaFree");

    std::printf("%s\n", failures == 0 ? "OK" : "FAILED");
    return failures == 0 ? 0 : 1;
}
