// The context (and device) each allocation lands in, as the program itself sees it, for a
// test to compare with the trace: the recorder caches each thread's current context and
// must forget it at every switch, whichever way the switch is made
// (cuCtxSetCurrent, cuCtxPushCurrent/PopCurrent, cuCtxCreate, cudaSetDevice, a context
// destroyed and another created at what may be the same address, a new thread). One JSON
// line per allocation: {"size": N, "context": "0x...", "device": D}. Built for the simulated
// CUDA by tests/recorder and with nvcc, statically and dynamically linked, by tests/gpu.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

namespace {

void fail(const char* what, int code) {
    std::fprintf(stderr, "%s failed: %d\n", what, code);
    std::exit(1);
}

void report(size_t size) {
    CUcontext ctx = nullptr;
    CUdevice dev = -1;
    cuCtxGetCurrent(&ctx);
    cuCtxGetDevice(&dev);
    std::printf("{\"size\": %zu, \"context\": \"0x%llx\", \"device\": %d}\n", size,
                static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(ctx)), dev);
}

void driverAlloc(size_t size) {
    CUdeviceptr p = 0;
    if (CUresult r = cuMemAlloc(&p, size); r != CUDA_SUCCESS) {
        fail("cuMemAlloc", r);
    }
    report(size);
}

void runtimeAlloc(size_t size) {
    void* p = nullptr;
    if (cudaError_t r = cudaMalloc(&p, size); r != cudaSuccess) {
        fail("cudaMalloc", r);
    }
    report(size);
}

} // namespace

int main() {
    int count = 0;
    cudaGetDeviceCount(&count);
    cudaSetDevice(0);
    cudaFree(nullptr); // the primary context, current
    CUcontext primary = nullptr;
    cuCtxGetCurrent(&primary);
    runtimeAlloc(51001);

    CUdevice dev0 = 0;
    cuDeviceGet(&dev0, 0);
    CUcontext second = nullptr;
    if (CUresult r = cuCtxCreate(&second, nullptr, 0, dev0); r != CUDA_SUCCESS) {
        fail("cuCtxCreate", r);
    }
    driverAlloc(52001);
    runtimeAlloc(52002); // the runtime uses the current context

    cuCtxSetCurrent(primary);
    driverAlloc(53001);

    cuCtxPushCurrent(second);
    driverAlloc(54001);
    CUcontext popped = nullptr;
    cuCtxPopCurrent(&popped);
    driverAlloc(54002);

    cuCtxSetCurrent(second);
    cudaSetDevice(0);
    runtimeAlloc(55001);

    if (count > 1) {
        cudaSetDevice(1);
        runtimeAlloc(56001);
        cudaSetDevice(0);
        runtimeAlloc(56002);
    }

    // Destroying a context frees what was allocated in it; the rest goes with the process.
    cuCtxDestroy(second);
    CUcontext third = nullptr;
    if (CUresult r = cuCtxCreate(&third, nullptr, 0, dev0); r != CUDA_SUCCESS) {
        fail("cuCtxCreate", r);
    }
    driverAlloc(57001); // perhaps at the destroyed context's address

    std::thread([] {
        cudaSetDevice(0);
        runtimeAlloc(58001);
    }).join();

    cuCtxSetCurrent(primary);
    runtimeAlloc(59001);
    cuCtxDestroy(third);
    return 0;
}
