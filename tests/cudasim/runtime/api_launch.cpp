// Runtime API: what nvcc-generated host code calls (module registration, launch configuration,
// kernel launches). Kernels never run on the simulated GPU; launches are accepted so that a
// program built with `nvcc -cudart shared` runs through its allocations.
#include "api_common.h"

#include <cstdlib>
#include <vector>

using namespace cudasim::rt;

namespace {

struct LaunchConfiguration {
    dim3 grid;
    dim3 block;
    size_t shared_memory;
    cudaStream_t stream;
};

// <<<...>>> pushes a configuration and the generated stub pops it right away; nested launches
// from argument expressions make it a stack.
std::vector<LaunchConfiguration>& configurations() {
    thread_local std::vector<LaunchConfiguration> stack;
    return stack;
}

cudaError_t launch(cudaStream_t) {
    CUDASIM_WITH_CONTEXT(api);
    (void)api;
    return cudaSuccess;
}

} // namespace

// nvcc's registration hooks: declared here because their header is internal to nvcc.
extern "C" {
void** __cudaRegisterFatBinary(void* fatCubin);
void __cudaRegisterFatBinaryEnd(void** fatCubinHandle);
void __cudaUnregisterFatBinary(void** fatCubinHandle);
void __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun,
                            const char* deviceName, int thread_limit, uint3* tid, uint3* bid,
                            dim3* bDim, dim3* gDim, int* wSize);
void __cudaRegisterVar(void** fatCubinHandle, char* hostVar, char* deviceAddress,
                       const char* deviceName, int ext, size_t size, int constant, int global);
void __cudaRegisterManagedVar(void** fatCubinHandle, void** hostVarPtrAddress, char* deviceAddress,
                              const char* deviceName, int ext, size_t size, int constant,
                              int global);
char __cudaInitModule(void** fatCubinHandle);
unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st* stream);
cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                       void* stream);
cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun);
cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                               size_t sharedMem, cudaStream_t stream);
cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args,
                                    size_t sharedMem, cudaStream_t stream);
}

// These run from static constructors, before main: they must not touch the driver.
void** __cudaRegisterFatBinary(void* fatCubin) {
    return new void*(fatCubin);
}

void __cudaRegisterFatBinaryEnd(void**) {}

void __cudaUnregisterFatBinary(void** fatCubinHandle) {
    delete fatCubinHandle;
}

void __cudaRegisterFunction(void**, const char*, char*, const char*, int, uint3*, uint3*, dim3*,
                            dim3*, int*) {}

void __cudaRegisterVar(void**, char*, char*, const char*, int, size_t, int, int) {}

// A __managed__ variable is used from host code through this pointer, so it must point at real
// memory. It is plain host memory, not charged to the device (limitation of the simulator).
void __cudaRegisterManagedVar(void**, void** hostVarPtrAddress, char*, const char*, int,
                              size_t size, int, int) {
    if (hostVarPtrAddress != nullptr) {
        *hostVarPtrAddress = std::calloc(1, size == 0 ? 1 : size);
    }
}

char __cudaInitModule(void**) {
    return 1;
}

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem,
                                     struct CUstream_st* stream) {
    configurations().push_back({gridDim, blockDim, sharedMem, stream});
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3* gridDim, dim3* blockDim, size_t* sharedMem,
                                       void* stream) {
    auto& stack = configurations();
    if (stack.empty()) {
        return finish(cudaErrorMissingConfiguration);
    }
    LaunchConfiguration top = stack.back();
    stack.pop_back();
    *gridDim = top.grid;
    *blockDim = top.block;
    *sharedMem = top.shared_memory;
    *static_cast<cudaStream_t*>(stream) = top.stream;
    return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* hostFun) {
    if (kernel == nullptr || hostFun == nullptr) {
        return finish(cudaErrorInvalidDeviceFunction);
    }
    // The host stub's address identifies the kernel well enough when nothing runs it.
    *kernel = reinterpret_cast<cudaKernel_t>(const_cast<void*>(hostFun));
    return cudaSuccess;
}

cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t stream) {
    return launch(stream);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t stream) {
    return launch(stream);
}

cudaError_t cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, cudaStream_t stream) {
    return launch(stream);
}

cudaError_t cudaLaunchKernel_ptsz(const void*, dim3, dim3, void**, size_t, cudaStream_t stream) {
    return launch(stream);
}
