// The simulated runtime (libcudart.so.13) on top of the simulated driver.
#include <catch2/catch.hpp>
#include <cuda.h>
#include <cuda_runtime.h>

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

namespace Catch {
template <> struct StringMaker<cudaError_t> {
    static std::string convert(cudaError_t error) { return cudaGetErrorName(error); }
};
} // namespace Catch

namespace {

constexpr size_t kMiB = 1u << 20;

size_t used_bytes() {
    size_t free = 0;
    size_t total = 0;
    REQUIRE(cudaMemGetInfo(&free, &total) == cudaSuccess);
    return total - free;
}

size_t capacity() {
    return std::strtoull(std::getenv("CUDASIM_MEMORY_BYTES"), nullptr, 10);
}

// The deprecated entry point is still what many programs call; it must keep working.
cudaError_t legacy_entry_point(const char* symbol, void** fn,
                               cudaDriverEntryPointQueryResult* status) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    return cudaGetDriverEntryPoint(symbol, fn, cudaEnableDefault, status);
#pragma GCC diagnostic pop
}

void* driver_function(const char* name) {
    void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    REQUIRE(library != nullptr);
    return dlsym(library, name);
}

} // namespace

TEST_CASE("the runtime reports the simulated device", "[runtime]") {
    int count = 0;
    REQUIRE(cudaGetDeviceCount(&count) == cudaSuccess);
    CHECK(count == 2); // CUDASIM_DEVICES=2 in the ctest environment
    cudaDeviceProp prop{};
    REQUIRE(cudaGetDeviceProperties(&prop, 0) == cudaSuccess);
    CHECK(std::string(prop.name) == "NVIDIA H200 (cudasim)");
    CHECK(prop.major == 9);
    CHECK(prop.minor == 0);
    CHECK(prop.totalGlobalMem == capacity());
    CHECK(prop.multiProcessorCount == 132);
    CHECK(prop.memoryPoolsSupported == 1);
    int value = 0;
    REQUIRE(cudaDeviceGetAttribute(&value, cudaDevAttrWarpSize, 0) == cudaSuccess);
    CHECK(value == 32);
    CHECK(cudaGetDeviceProperties(&prop, 2) == cudaErrorInvalidDevice);
    cudaGetLastError();

    int version = 0;
    REQUIRE(cudaDriverGetVersion(&version) == cudaSuccess);
    CHECK(version == 13000);
    REQUIRE(cudaRuntimeGetVersion(&version) == cudaSuccess);
    CHECK(version == 13000);
}

TEST_CASE("cudaMalloc and cudaFree, and the errors they report", "[runtime]") {
    const size_t used_before = used_bytes();
    void* p = nullptr;
    REQUIRE(cudaMalloc(&p, 1234567) == cudaSuccess);
    CHECK(used_bytes() - used_before == 2 * kMiB);
    cudaPointerAttributes attributes{};
    REQUIRE(cudaPointerGetAttributes(&attributes, p) == cudaSuccess);
    CHECK(attributes.type == cudaMemoryTypeDevice);
    CHECK(attributes.device == 0);

    CHECK(cudaFree(p) == cudaSuccess);
    CHECK(cudaFree(p) == cudaErrorInvalidValue); // double free
    CHECK(cudaFree(nullptr) == cudaSuccess);
    CHECK(used_bytes() == used_before);

    void* empty = reinterpret_cast<void*>(1);
    CHECK(cudaMalloc(&empty, 0) == cudaSuccess);
    CHECK(empty == nullptr);

    void* untouched = reinterpret_cast<void*>(0xdeadbeef);
    CHECK(cudaMalloc(&untouched, capacity() + 1) == cudaErrorMemoryAllocation);
    CHECK(untouched == reinterpret_cast<void*>(0xdeadbeef));
    cudaGetLastError();
}

TEST_CASE("the last error is sticky until cudaGetLastError reads it", "[runtime]") {
    cudaGetLastError();
    void* p = nullptr;
    CHECK(cudaFree(reinterpret_cast<void*>(0x1000)) == cudaErrorInvalidValue);
    REQUIRE(cudaMalloc(&p, 256) == cudaSuccess); // a success does not clear it
    CHECK(cudaPeekAtLastError() == cudaErrorInvalidValue);
    CHECK(cudaPeekAtLastError() == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaSuccess);
    CHECK(cudaFree(p) == cudaSuccess);

    CHECK(std::string(cudaGetErrorName(cudaErrorMemoryAllocation)) == "cudaErrorMemoryAllocation");
    CHECK(std::string(cudaGetErrorString(cudaErrorMemoryAllocation)) == "out of memory");
    CHECK(std::string(cudaGetErrorString(cudaErrorInvalidValue)) == "invalid argument");
}

TEST_CASE("pitched, 3D, managed, pinned and registered memory", "[runtime]") {
    const size_t used_before = used_bytes();
    void* pitched = nullptr;
    size_t pitch = 0;
    REQUIRE(cudaMallocPitch(&pitched, &pitch, 1000, 100) == cudaSuccess);
    CHECK(pitch == 1024);
    cudaPitchedPtr volume{};
    REQUIRE(cudaMalloc3D(&volume, make_cudaExtent(100, 64, 8)) == cudaSuccess);
    CHECK(volume.pitch == 512);
    CHECK(volume.xsize == 100);

    void* managed = nullptr;
    REQUIRE(cudaMallocManaged(&managed, 11001) == cudaSuccess);
    std::memset(managed, 7, 11001);
    cudaPointerAttributes attributes{};
    REQUIRE(cudaPointerGetAttributes(&attributes, managed) == cudaSuccess);
    CHECK(attributes.type == cudaMemoryTypeManaged);

    void* pinned = nullptr;
    REQUIRE(cudaMallocHost(&pinned, 11001) == cudaSuccess);
    std::memset(pinned, 7, 11001);
    REQUIRE(cudaPointerGetAttributes(&attributes, pinned) == cudaSuccess);
    CHECK(attributes.type == cudaMemoryTypeHost);
    void* mapped = nullptr;
    REQUIRE(cudaHostAlloc(&mapped, 4096, cudaHostAllocMapped) == cudaSuccess);
    void* device_view = nullptr;
    REQUIRE(cudaHostGetDevicePointer(&device_view, mapped, 0) == cudaSuccess);
    CHECK(device_view == mapped);

    CHECK(cudaFree(pinned) == cudaErrorInvalidValue);      // wrong family
    CHECK(cudaFreeHost(pitched) == cudaErrorInvalidValue); // wrong family
    cudaGetLastError();

    static char program_buffer[65536];
    REQUIRE(cudaHostRegister(program_buffer, sizeof(program_buffer), 0) == cudaSuccess);
    CHECK(cudaHostRegister(program_buffer, sizeof(program_buffer), 0) ==
          cudaErrorHostMemoryAlreadyRegistered);
    CHECK(cudaHostUnregister(program_buffer) == cudaSuccess);
    int on_stack = 0;
    REQUIRE(cudaPointerGetAttributes(&attributes, &on_stack) == cudaSuccess);
    CHECK(attributes.type == cudaMemoryTypeUnregistered);
    cudaGetLastError();

    CHECK(cudaFree(pitched) == cudaSuccess);
    CHECK(cudaFree(volume.ptr) == cudaSuccess);
    CHECK(cudaFree(managed) == cudaSuccess);
    CHECK(cudaFreeHost(pinned) == cudaSuccess);
    CHECK(cudaFreeHost(mapped) == cudaSuccess);
    CHECK(used_bytes() == used_before);
}

TEST_CASE("arrays through the runtime", "[runtime]") {
    const size_t used_before = used_bytes();
    cudaChannelFormatDesc float4 =
        cudaCreateChannelDesc(32, 32, 32, 32, cudaChannelFormatKindFloat);
    cudaArray_t array = nullptr;
    REQUIRE(cudaMallocArray(&array, &float4, 1024, 256) == cudaSuccess); // 4 MiB
    CHECK(used_bytes() - used_before == 4 * kMiB);
    cudaChannelFormatDesc byte = cudaCreateChannelDesc(8, 0, 0, 0, cudaChannelFormatKindUnsigned);
    cudaArray_t surface = nullptr;
    REQUIRE(cudaMallocArray(&surface, &byte, 4096, 1024, cudaArraySurfaceLoadStore) == cudaSuccess);
    cudaArray_t layered = nullptr;
    REQUIRE(cudaMalloc3DArray(&layered, &byte, make_cudaExtent(512, 512, 4), cudaArrayLayered) ==
            cudaSuccess);
    cudaMipmappedArray_t mipmapped = nullptr;
    REQUIRE(cudaMallocMipmappedArray(&mipmapped, &byte, make_cudaExtent(1024, 1024, 0), 4, 0) ==
            cudaSuccess);
    CHECK(cudaFreeArray(array) == cudaSuccess);
    CHECK(cudaFreeArray(surface) == cudaSuccess);
    CHECK(cudaFreeArray(layered) == cudaSuccess);
    CHECK(cudaFreeMipmappedArray(mipmapped) == cudaSuccess);
    CHECK(used_bytes() == used_before);

    cudaChannelFormatDesc mixed = cudaCreateChannelDesc(8, 16, 0, 0, cudaChannelFormatKindSigned);
    CHECK(cudaMallocArray(&array, &mixed, 16, 16) == cudaErrorInvalidChannelDescriptor);
    cudaGetLastError();
}

TEST_CASE("stream-ordered allocation and pools through the runtime", "[runtime]") {
    const size_t used_before = used_bytes();
    cudaStream_t stream = nullptr;
    REQUIRE(cudaStreamCreate(&stream) == cudaSuccess);
    void* p = nullptr;
    REQUIRE(cudaMallocAsync(&p, 11001, stream) == cudaSuccess);
    REQUIRE(cudaFreeAsync(p, stream) == cudaSuccess);
    CHECK(used_bytes() - used_before == 32 * kMiB); // one 32 MiB step, held by the pool
    REQUIRE(cudaStreamSynchronize(stream) == cudaSuccess);
    CHECK(used_bytes() == used_before);

    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool = nullptr;
    REQUIRE(cudaMemPoolCreate(&pool, &props) == cudaSuccess);
    REQUIRE(cudaMallocFromPoolAsync(&p, 3 * kMiB, pool, stream) == cudaSuccess);
    cuuint64_t reserved = 0;
    REQUIRE(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) ==
            cudaSuccess);
    CHECK(reserved == 32 * kMiB);
    REQUIRE(cudaFreeAsync(p, stream) == cudaSuccess);
    REQUIRE(cudaMemPoolTrimTo(pool, 0) == cudaSuccess);
    CHECK(cudaMemPoolDestroy(pool) == cudaSuccess);

    cudaMemPool_t default_pool = nullptr;
    REQUIRE(cudaDeviceGetDefaultMemPool(&default_pool, 0) == cudaSuccess);
    cudaMemPool_t current = nullptr;
    REQUIRE(cudaDeviceGetMemPool(&current, 0) == cudaSuccess);
    CHECK(current == default_pool);
    CHECK(cudaStreamDestroy(stream) == cudaSuccess);
    CHECK(used_bytes() == used_before);
}

TEST_CASE("cudaDeviceReset frees the device's allocations", "[runtime]") {
    const size_t used_before = used_bytes();
    void* device = nullptr;
    REQUIRE(cudaMalloc(&device, 5 * kMiB) == cudaSuccess);
    void* host = nullptr;
    REQUIRE(cudaMallocHost(&host, 4096) == cudaSuccess);
    REQUIRE(cudaDeviceReset() == cudaSuccess);
    CHECK(used_bytes() == used_before);
    CHECK(cudaFree(device) == cudaErrorInvalidValue);
    CHECK(cudaFreeHost(host) == cudaErrorInvalidValue);
    cudaGetLastError();
    REQUIRE(cudaMalloc(&device, 256) == cudaSuccess); // usable again
    CHECK(cudaFree(device) == cudaSuccess);
}

TEST_CASE("cudaSetDevice selects where allocations go", "[runtime]") {
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    int device = -1;
    REQUIRE(cudaGetDevice(&device) == cudaSuccess);
    CHECK(device == 1);
    void* p = nullptr;
    REQUIRE(cudaMalloc(&p, 11001) == cudaSuccess);
    cudaPointerAttributes attributes{};
    REQUIRE(cudaPointerGetAttributes(&attributes, p) == cudaSuccess);
    CHECK(attributes.device == 1);
    CHECK(cudaFree(p) == cudaSuccess);
    CHECK(cudaSetDevice(2) == cudaErrorInvalidDevice);
    cudaGetLastError();
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
}

TEST_CASE("driver entry points come from the driver's resolver", "[runtime]") {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult status{};
    REQUIRE(legacy_entry_point("cuMemAlloc", &fn, &status) == cudaSuccess);
    CHECK(status == cudaDriverEntryPointSuccess);
    CHECK(fn == driver_function("cuMemAlloc_v2"));
    REQUIRE(cudaGetDriverEntryPointByVersion("cuMemAllocAsync", &fn, 12000,
                                             cudaEnablePerThreadDefaultStream,
                                             &status) == cudaSuccess);
    CHECK(fn == driver_function("cuMemAllocAsync_ptsz"));
    REQUIRE(cudaGetDriverEntryPointByVersion("cuMemCreate", &fn, 12000, cudaEnableDefault,
                                             &status) == cudaSuccess);
    CHECK(fn == driver_function("cuMemCreate"));
    REQUIRE(legacy_entry_point("cuNoSuchFunction", &fn, &status) == cudaSuccess);
    CHECK(fn == nullptr);
    CHECK(status == cudaDriverEntryPointSymbolNotFound);
}

TEST_CASE("streams, events and launches are accepted", "[runtime]") {
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
    REQUIRE(cudaEventCreate(&start) == cudaSuccess);
    REQUIRE(cudaEventCreateWithFlags(&stop, cudaEventDefault) == cudaSuccess);
    REQUIRE(cudaEventRecord(start, nullptr) == cudaSuccess);
    REQUIRE(cudaLaunchKernel(reinterpret_cast<const void*>(&used_bytes), dim3(1), dim3(32), nullptr,
                             0, nullptr) == cudaSuccess);
    REQUIRE(cudaEventRecord(stop, nullptr) == cudaSuccess);
    REQUIRE(cudaEventSynchronize(stop) == cudaSuccess);
    float ms = -1;
    REQUIRE(cudaEventElapsedTime(&ms, start, stop) == cudaSuccess);
    CHECK(ms >= 0);
    CHECK(cudaEventDestroy(start) == cudaSuccess);
    CHECK(cudaEventDestroy(stop) == cudaSuccess);
    char a[16] = "host to host";
    char b[16] = {};
    REQUIRE(cudaMemcpy(b, a, sizeof(a), cudaMemcpyHostToHost) == cudaSuccess);
    CHECK(std::string(b) == "host to host");
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
}
