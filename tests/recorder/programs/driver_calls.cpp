// Every allocation API of the driver, reached by the route argv[1] names:
//   exported  - linked against libcuda, calling its exported symbols
//   dlsym     - dlopen("libcuda.so.1") + dlsym, as JAX/XLA does
//   procaddr  - cuGetProcAddress_v2 found with dlsym, as cudart and CuPy do
// Each size appears once, so tests can find each event.
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <unistd.h>
#include <vector>

#undef cuGetProcAddress

namespace {

void* g_libcuda = nullptr;
std::string g_route;

using GetProc = CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);

// Resolves `exported` (the ABI name) by dlsym, or `base` by cuGetProcAddress.
void* resolve(const char* base, const char* exported) {
    if (g_route == "dlsym") {
        return dlsym(g_libcuda, exported);
    }
    static GetProc getProc = reinterpret_cast<GetProc>(dlsym(g_libcuda, "cuGetProcAddress_v2"));
    void* fn = nullptr;
    CUdriverProcAddressQueryResult status{};
    if (!getProc ||
        getProc(base, &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status) != CUDA_SUCCESS) {
        return nullptr;
    }
    return fn;
}

#define DRIVER_FN(base, exported)                                                                  \
    (g_route == "exported" ? reinterpret_cast<decltype(&::exported)>(&::exported)                  \
                           : reinterpret_cast<decltype(&::exported)>(resolve(#base, #exported)))

void check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) {
        std::fprintf(stderr, "%s failed: %d\n", what, static_cast<int>(r));
        std::exit(1);
    }
}

} // namespace

int main(int argc, char** argv) {
    g_route = argc > 1 ? argv[1] : "exported";
    g_libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!g_libcuda) {
        std::fprintf(stderr, "cannot load libcuda.so.1\n");
        return 1;
    }
    check(DRIVER_FN(cuInit, cuInit)(0), "cuInit");
    CUdevice dev;
    check(DRIVER_FN(cuDeviceGet, cuDeviceGet)(&dev, 0), "cuDeviceGet");
    CUcontext primary;
    check(DRIVER_FN(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain)(&primary, dev), "retain");
    check(DRIVER_FN(cuCtxSetCurrent, cuCtxSetCurrent)(primary), "set current");

    CUdeviceptr d = 0;
    check(DRIVER_FN(cuMemAlloc, cuMemAlloc_v2)(&d, 21001), "cuMemAlloc");
    check(DRIVER_FN(cuMemFree, cuMemFree_v2)(d), "cuMemFree");
    size_t pitch = 0;
    check(DRIVER_FN(cuMemAllocPitch, cuMemAllocPitch_v2)(&d, &pitch, 2001, 5, 4), "pitch");
    check(DRIVER_FN(cuMemFree, cuMemFree_v2)(d), "cuMemFree");
    check(DRIVER_FN(cuMemAllocAsync, cuMemAllocAsync)(&d, 22001, nullptr), "async");
    check(DRIVER_FN(cuMemFreeAsync, cuMemFreeAsync)(d, nullptr), "free async");
    check(DRIVER_FN(cuMemAllocManaged, cuMemAllocManaged)(&d, 23001, CU_MEM_ATTACH_GLOBAL),
          "managed");
    check(DRIVER_FN(cuMemFree, cuMemFree_v2)(d), "cuMemFree");
    void* h = nullptr;
    check(DRIVER_FN(cuMemAllocHost, cuMemAllocHost_v2)(&h, 24001), "alloc host");
    check(DRIVER_FN(cuMemFreeHost, cuMemFreeHost)(h), "free host");
    check(DRIVER_FN(cuMemHostAlloc, cuMemHostAlloc)(&h, 25001, 0), "host alloc");
    check(DRIVER_FN(cuMemFreeHost, cuMemFreeHost)(h), "free host");
    std::vector<char> buffer(26001);
    check(DRIVER_FN(cuMemHostRegister, cuMemHostRegister_v2)(buffer.data(), buffer.size(), 0),
          "register");
    check(DRIVER_FN(cuMemHostUnregister, cuMemHostUnregister)(buffer.data()), "unregister");

    CUDA_ARRAY_DESCRIPTOR ad{};
    ad.Format = CU_AD_FORMAT_UNSIGNED_INT16;
    ad.NumChannels = 2;
    ad.Width = 27;
    ad.Height = 3; // 27*3*2*2 = 324 bytes
    CUarray array;
    check(DRIVER_FN(cuArrayCreate, cuArrayCreate_v2)(&array, &ad), "array");
    check(DRIVER_FN(cuArrayDestroy, cuArrayDestroy)(array), "array destroy");
    CUDA_ARRAY3D_DESCRIPTOR ad3{};
    ad3.Format = CU_AD_FORMAT_FLOAT;
    ad3.NumChannels = 1;
    ad3.Width = 9;
    ad3.Height = 5;
    ad3.Depth = 3; // 540 bytes
    check(DRIVER_FN(cuArray3DCreate, cuArray3DCreate_v2)(&array, &ad3), "array3d");
    check(DRIVER_FN(cuArrayDestroy, cuArrayDestroy)(array), "array destroy");

    // Virtual memory: reserve, create, map, unmap, release, free the range.
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    size_t gran = 0;
    check(DRIVER_FN(cuMemGetAllocationGranularity,
                    cuMemGetAllocationGranularity)(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
          "granularity");
    CUdeviceptr va = 0;
    check(DRIVER_FN(cuMemAddressReserve, cuMemAddressReserve)(&va, 4 * gran, 0, 0, 0), "reserve");
    CUmemGenericAllocationHandle handle;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    check(DRIVER_FN(cuMemCreate, cuMemCreate)(&handle, 2 * gran, &prop, 0), "create");
    check(DRIVER_FN(cuMemMap, cuMemMap)(va, 2 * gran, 0, handle, 0), "map");
    // Retain by an address inside the mapping, and import our own export: each is one more
    // reference to release (NCCL does both).
    CUmemGenericAllocationHandle retained;
    check(DRIVER_FN(cuMemRetainAllocationHandle,
                    cuMemRetainAllocationHandle)(&retained, reinterpret_cast<void*>(va + gran)),
          "retain");
    check(DRIVER_FN(cuMemRelease, cuMemRelease)(retained), "release retained");
    int fd = -1;
    check(DRIVER_FN(cuMemExportToShareableHandle, cuMemExportToShareableHandle)(
              &fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
          "export");
    CUmemGenericAllocationHandle imported;
    check(DRIVER_FN(cuMemImportFromShareableHandle, cuMemImportFromShareableHandle)(
              &imported, reinterpret_cast<void*>(static_cast<intptr_t>(fd)),
              CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
          "import");
    close(fd);
    check(DRIVER_FN(cuMemRelease, cuMemRelease)(imported), "release imported");
    check(DRIVER_FN(cuMemUnmap, cuMemUnmap)(va, 2 * gran), "unmap");
    check(DRIVER_FN(cuMemRelease, cuMemRelease)(handle), "release");
    check(DRIVER_FN(cuMemAddressFree, cuMemAddressFree)(va, 4 * gran), "address free");

    // A pool of our own.
    CUmemPoolProps pp{};
    pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    pp.location.id = dev;
    CUmemoryPool pool;
    check(DRIVER_FN(cuMemPoolCreate, cuMemPoolCreate)(&pool, &pp), "pool");
    check(DRIVER_FN(cuMemAllocFromPoolAsync, cuMemAllocFromPoolAsync)(&d, 28001, pool, nullptr),
          "pool alloc");
    check(DRIVER_FN(cuMemFreeAsync, cuMemFreeAsync)(d, nullptr), "pool free");
    check(DRIVER_FN(cuMemPoolDestroy, cuMemPoolDestroy)(pool), "pool destroy");

    // A context of our own, and memory that only teardown releases.
    CUcontext ctx;
    check(DRIVER_FN(cuCtxCreate, cuCtxCreate_v4)(&ctx, nullptr, 0, dev), "ctx create");
    check(DRIVER_FN(cuMemAlloc, cuMemAlloc_v2)(&d, 29001), "alloc in ctx");
    check(DRIVER_FN(cuCtxDestroy, cuCtxDestroy_v2)(ctx), "ctx destroy");
    check(DRIVER_FN(cuCtxSetCurrent, cuCtxSetCurrent)(primary), "set current");
    check(DRIVER_FN(cuMemAlloc, cuMemAlloc_v2)(&d, 30001), "alloc in primary");
    check(DRIVER_FN(cuDevicePrimaryCtxReset, cuDevicePrimaryCtxReset_v2)(dev), "reset");
    return 0;
}
