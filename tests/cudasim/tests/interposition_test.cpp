// A tracer exports driver functions under their real names (LD_PRELOAD). The simulated driver
// must then behave like NVIDIA's: its own internal calls do not land in the tracer, and
// cuGetProcAddress hands out the driver's functions, not the tracer's. This executable plays the
// tracer by defining cuMemHostAlloc itself (exported with -rdynamic, so it interposes).
#include <cuda.h>

#include <dlfcn.h>

#include <cstdio>

namespace {
int interposed_calls = 0;
int failures = 0;

void expect(bool condition, const char* what) {
    if (!condition) {
        std::fprintf(stderr, "FAILED: %s\n", what);
        ++failures;
    }
}
} // namespace

extern "C" CUresult cuMemHostAlloc(void** pp, size_t, unsigned int) {
    ++interposed_calls;
    *pp = nullptr;
    return CUDA_ERROR_UNKNOWN;
}

int main() {
    void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    expect(libcuda != nullptr, "libcuda.so.1 is loaded");
    if (libcuda == nullptr) {
        return 1;
    }
    expect(cuInit(0) == CUDA_SUCCESS, "cuInit");
    CUcontext ctx = nullptr;
    expect(cuDevicePrimaryCtxRetain(&ctx, 0) == CUDA_SUCCESS, "retain");
    expect(cuCtxSetCurrent(ctx) == CUDA_SUCCESS, "set current");

    // cuMemAllocHost_v2 is implemented with the driver's cuMemHostAlloc.
    void* host = nullptr;
    expect(cuMemAllocHost(&host, 4096) == CUDA_SUCCESS, "cuMemAllocHost_v2 works");
    expect(interposed_calls == 0, "the driver's internal call stayed inside the driver");
    expect(cuMemFreeHost(host) == CUDA_SUCCESS, "cuMemFreeHost");

    void* resolved = nullptr;
    CUdriverProcAddressQueryResult status{};
    expect(cuGetProcAddress("cuMemHostAlloc", &resolved, 13000, 0, &status) == CUDA_SUCCESS,
           "cuGetProcAddress");
    expect(resolved == dlsym(libcuda, "cuMemHostAlloc"), "the resolver returns the driver's own");
    expect(resolved != reinterpret_cast<void*>(&cuMemHostAlloc), "not the interposer's");

    std::printf("%s\n", failures == 0 ? "OK" : "FAILED");
    return failures == 0 ? 0 : 1;
}
