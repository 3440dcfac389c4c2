// Every allocation API of the runtime, each with a size found nowhere else, so a test can
// find each event by its size. Run under the tracer; tests/recorder asserts on the dump.
// argv[1]: "all" (default) or "entrypoint" (driver functions via cudaGetDriverEntryPoint).
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t err_ = (call);                                                                 \
        if (err_ != cudaSuccess) {                                                                 \
            std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorName(err_));                \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

__attribute__((noinline)) void* leak_here() {
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 1234567));
    return p;
}

static void runtimeApis() {
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 11001));
    CHECK(cudaFree(p));
    CHECK(cudaFree(nullptr)); // a no-op: no event

    size_t pitch = 0;
    CHECK(cudaMallocPitch(&p, &pitch, 1001, 7));
    CHECK(cudaFree(p));

    cudaPitchedPtr pp{};
    CHECK(cudaMalloc3D(&pp, make_cudaExtent(1003, 3, 2)));
    CHECK(cudaFree(pp.ptr));

    cudaStream_t stream = nullptr;
    CHECK(cudaStreamCreate(&stream));
    CHECK(cudaMallocAsync(&p, 12001, stream));
    CHECK(cudaFreeAsync(p, stream));

    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool = nullptr;
    CHECK(cudaMemPoolCreate(&pool, &props));
    CHECK(cudaMallocFromPoolAsync(&p, 13001, pool, stream));
    CHECK(cudaFreeAsync(p, stream));
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaMemPoolTrimTo(pool, 0));
    CHECK(cudaMemPoolDestroy(pool));

    CHECK(cudaMallocManaged(&p, 14001, cudaMemAttachGlobal));
    static_cast<char*>(p)[0] = 1; // managed memory is host-accessible
    CHECK(cudaFree(p));

    CHECK(cudaMallocHost(&p, 15001));
    CHECK(cudaFreeHost(p));
    CHECK(cudaHostAlloc(&p, 16001, cudaHostAllocDefault));
    CHECK(cudaFreeHost(p));

    std::vector<char> buffer(17001);
    CHECK(cudaHostRegister(buffer.data(), buffer.size(), cudaHostRegisterDefault));
    CHECK(cudaHostUnregister(buffer.data()));

    cudaChannelFormatDesc desc = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaArray_t array = nullptr;
    CHECK(cudaMallocArray(&array, &desc, 19, 11)); // 19*11*4 = 836 bytes
    CHECK(cudaFreeArray(array));
    CHECK(cudaMalloc3DArray(&array, &desc, make_cudaExtent(5, 7, 3), 0)); // 420 bytes
    CHECK(cudaFreeArray(array));
    cudaMipmappedArray_t mip = nullptr;
    CHECK(cudaMallocMipmappedArray(&mip, &desc, make_cudaExtent(8, 8, 0), 2, 0)); // 320
    CHECK(cudaFreeMipmappedArray(mip));

    // Fails: more than any device has. Recorded with its error and cuMemGetInfo's view.
    void* huge = nullptr;
    if (cudaMalloc(&huge, size_t{1} << 50) == cudaSuccess) {
        std::fprintf(stderr, "a 1 PiB allocation succeeded?\n");
        std::exit(1);
    }
    cudaGetLastError();
    CHECK(cudaStreamDestroy(stream));
}

static void entryPointApis() {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult status{};
    CHECK(cudaGetDriverEntryPointByVersion("cuMemAlloc", &fn, 12000, cudaEnableDefault, &status));
    auto alloc = reinterpret_cast<CUresult (*)(CUdeviceptr*, size_t)>(fn);
    CHECK(cudaGetDriverEntryPointByVersion("cuMemFree", &fn, 12000, cudaEnableDefault, &status));
    auto release = reinterpret_cast<CUresult (*)(CUdeviceptr)>(fn);
    CUdeviceptr d = 0;
    if (alloc(&d, 18001) != CUDA_SUCCESS || release(d) != CUDA_SUCCESS) {
        std::fprintf(stderr, "driver entry points failed\n");
        std::exit(1);
    }
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "all";
    CHECK(cudaSetDevice(0));
    if (std::strcmp(mode, "entrypoint") == 0) {
        entryPointApis();
    } else {
        runtimeApis();
    }
    leak_here();
    return 0;
}
