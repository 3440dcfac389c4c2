// Prints, as "key value" lines, how CUDA behaves on the points where the simulator had to
// choose: error codes, placement, alignment and memory accounting. Run on a real GPU and on the
// simulator, the two outputs are compared line by line (h200_expected.txt holds the GPU's).
//
// Values are relative (deltas, alignments, equalities) so that they do not depend on the
// device's size or on where the driver happens to place things.
#include <cuda.h>
#include <cuda_runtime.h>

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

void print(const char* key, long long value) {
    std::printf("%s %lld\n", key, value);
}
void print_error(const char* key, cudaError_t e) {
    std::printf("%s %s\n", key, cudaGetErrorName(e));
}
void print_result(const char* key, CUresult r) {
    const char* name = nullptr;
    cuGetErrorName(r, &name);
    std::printf("%s %s\n", key, name != nullptr ? name : "?");
}

long long used() {
    size_t free = 0;
    size_t total = 0;
    cudaMemGetInfo(&free, &total);
    return static_cast<long long>(total - free);
}

constexpr long long kMiB = 1 << 20;

} // namespace

int main() {
    if (cudaFree(nullptr) != cudaSuccess) { // context first, so that deltas exclude it
        std::fprintf(stderr, "no CUDA device\n");
        return 1;
    }
    void* libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    void* pfn = nullptr;
    CUdriverProcAddressQueryResult status{};

    // cuGetProcAddress
    pfn = reinterpret_cast<void*>(1);
    print_result("proc.empty.result", cuGetProcAddress("", &pfn, 12000, 0, &status));
    print("proc.empty.status", status);
    print("proc.empty.pfn_null", pfn == nullptr);
    pfn = reinterpret_cast<void*>(1);
    print_result("proc.unknown.result",
                 cuGetProcAddress("cuNoSuchFunction", &pfn, 13000, 0, &status));
    print("proc.unknown.status", status);
    print("proc.unknown.pfn_null", pfn == nullptr);
    print_result("proc.old_version.result", cuGetProcAddress("cuMemAlloc", &pfn, 3000, 0, &status));
    print("proc.old_version.status", status);
    print_result("proc.future_version.result",
                 cuGetProcAddress("cuMemAlloc", &pfn, 99000, 0, &status));
    cuGetProcAddress("cuGetProcAddress", &pfn, 12000, 0, &status);
    print("proc.resolver_12000_is_v2", pfn == dlsym(libcuda, "cuGetProcAddress_v2"));
    cuGetProcAddress("cuGetProcAddress", &pfn, 11030, 0, &status);
    print("proc.resolver_11030_is_v1", pfn == dlsym(libcuda, "cuGetProcAddress"));
    cuGetProcAddress("cuMemAllocAsync", &pfn, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
                     &status);
    print("proc.alloc_async_ptsz", pfn == dlsym(libcuda, "cuMemAllocAsync_ptsz"));
    cuGetProcAddress("cuCtxSynchronize", &pfn, 13000, 0, &status);
    print("proc.ctx_synchronize_13000_is_v2", pfn == dlsym(libcuda, "cuCtxSynchronize_v2"));
    cuGetProcAddress("cuMemAlloc", &pfn, 13000, 0, &status);
    print("proc.mem_alloc_is_v2", pfn == dlsym(libcuda, "cuMemAlloc_v2"));
    void* entry = reinterpret_cast<void*>(1);
    cudaDriverEntryPointQueryResult entry_status{};
    print_error("entry.unknown.result", cudaGetDriverEntryPointByVersion("cuNoSuchFunction", &entry,
                                                                         12000, 0, &entry_status));
    print("entry.unknown.status", entry_status);
    print("entry.unknown.null", entry == nullptr);
    cudaGetLastError();

    // cudaMalloc / cudaFree basics
    void* zero = reinterpret_cast<void*>(1);
    print_error("malloc.zero.result", cudaMalloc(&zero, 0));
    print("malloc.zero.null", zero == nullptr);
    print_error("free.null.result", cudaFree(nullptr));

    // Placement of small and large allocations
    long long base = used();
    char* a = nullptr;
    char* b = nullptr;
    char* c = nullptr;
    cudaMalloc(&a, 1000);
    print("small.first.used_delta", used() - base);
    cudaMalloc(&b, 11001);
    cudaMalloc(&c, 1);
    print("small.a_mod_256", reinterpret_cast<uintptr_t>(a) % 256);
    print("small.b_minus_a", b - a);
    print("small.c_minus_b", c - b);
    print("small.all.used_delta", used() - base);
    cudaFree(a);
    char* again = nullptr;
    cudaMalloc(&again, 200);
    print("small.reuse_same_address", again == a);
    char* big = nullptr;
    long long before_big = used();
    cudaMalloc(&big, 3 * kMiB);
    print("big.mod_2MiB", reinterpret_cast<uintptr_t>(big) % (2 * kMiB));
    print("big.used_delta", used() - before_big);

    // Pitch
    void* pitched = nullptr;
    size_t pitch = 0;
    cudaMallocPitch(&pitched, &pitch, 1000, 10);
    print("pitch.width_1000", static_cast<long long>(pitch));
    void* pitched2 = nullptr;
    cudaMallocPitch(&pitched2, &pitch, 512, 10);
    print("pitch.width_512", static_cast<long long>(pitch));
    CUdeviceptr dp = 0;
    print_result("pitch.element_size_3", cuMemAllocPitch(&dp, &pitch, 512, 10, 3));

    // Freeing the wrong thing
    void* pinned = nullptr;
    cudaMallocHost(&pinned, 11001);
    print_error("free.interior", cudaFree(b + 256));
    print_error("free.host_pinned", cudaFree(pinned));
    print_error("freehost.device", cudaFreeHost(b));
    print_error("free.b", cudaFree(b));
    print_error("free.b_again", cudaFree(b));
    print_error("last_error_after_failures", cudaGetLastError());
    print_result("cu.free.zero", cuMemFree(0));
    print_result("cu.free.unknown", cuMemFree(reinterpret_cast<CUdeviceptr>(b) + 512));
    print_result("cu.freehost.unknown", cuMemFreeHost(reinterpret_cast<void*>(0x1000)));
    cudaGetLastError();
    long long before_pinned = used();
    void* pinned2 = nullptr;
    cudaMallocHost(&pinned2, 4 * kMiB);
    print("pinned.used_delta", used() - before_pinned);
    int on_stack = 0;
    unsigned type = 0;
    print_result("attr.stack_pointer",
                 cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                       reinterpret_cast<CUdeviceptr>(&on_stack)));
    CUdeviceptr range_base = 0;
    size_t range_size = 0;
    print_result("range.unknown", cuMemGetAddressRange(&range_base, &range_size,
                                                       reinterpret_cast<CUdeviceptr>(&on_stack)));
    cuMemGetAddressRange(&range_base, &range_size, reinterpret_cast<CUdeviceptr>(c));
    print("range.small_size", static_cast<long long>(range_size));

    // Pools
    cudaMemPool_t pool = nullptr;
    cudaDeviceGetDefaultMemPool(&pool, 0);
    long long before_pool = used();
    void* async = nullptr;
    cudaMallocAsync(&async, kMiB, nullptr);
    uint64_t reserved = 0;
    uint64_t in_use = 0;
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved);
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &in_use);
    print("pool.reserved_after_1MiB", static_cast<long long>(reserved));
    print("pool.used_after_1MiB", static_cast<long long>(in_use));
    print("pool.used_delta", used() - before_pool);
    void* async2 = nullptr;
    cudaMallocAsync(&async2, 11001, nullptr);
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &in_use);
    print("pool.used_after_11001_more", static_cast<long long>(in_use));
    cudaFreeAsync(async, nullptr);
    cudaFreeAsync(async2, nullptr);
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved);
    print("pool.reserved_after_free", static_cast<long long>(reserved));
    cudaStreamSynchronize(nullptr);
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved);
    print("pool.reserved_after_sync", static_cast<long long>(reserved));
    print("pool.used_delta_after_sync", used() - before_pool);

    // VMM
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t granularity = 0;
    cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    print("vmm.granularity", static_cast<long long>(granularity));
    long long before_vmm = used();
    CUdeviceptr va = 0;
    cuMemAddressReserve(&va, 8 * kMiB, 0, 0, 0);
    print("vmm.reserve.used_delta", used() - before_vmm);
    CUmemGenericAllocationHandle handle = 0;
    cuMemCreate(&handle, 4 * kMiB, &prop, 0);
    print("vmm.create.used_delta", used() - before_vmm);
    CUmemGenericAllocationHandle unaligned = 0;
    CUresult unaligned_result = cuMemCreate(&unaligned, 3 * kMiB, &prop, 0);
    print_result("vmm.create.unaligned", unaligned_result);
    if (unaligned_result == CUDA_SUCCESS) {
        cuMemRelease(unaligned);
    }
    cuMemMap(va, 4 * kMiB, 0, handle, 0);
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    print_result("vmm.set_access", cuMemSetAccess(va, 4 * kMiB, &access, 1));
    print_result("vmm.address_free_while_mapped", cuMemAddressFree(va, 8 * kMiB));
    print_result("vmm.unmap_partial", cuMemUnmap(va, 2 * kMiB));
    print_result("vmm.release_while_mapped", cuMemRelease(handle));
    print("vmm.after_release.used_delta", used() - before_vmm);
    print_result("vmm.unmap", cuMemUnmap(va, 4 * kMiB));
    print("vmm.after_unmap.used_delta", used() - before_vmm);
    print_result("vmm.release_again", cuMemRelease(handle));
    print_result("vmm.address_free", cuMemAddressFree(va, 8 * kMiB));
    CUmemAllocationProp host_prop = prop;
    host_prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
    host_prop.location.id = 0;
    CUmemGenericAllocationHandle host_handle = 0;
    long long before_host = used();
    CUresult host_created = cuMemCreate(&host_handle, 2 * kMiB, &host_prop, 0);
    print_result("vmm.host.create", host_created);
    print("vmm.host.used_delta", used() - before_host);
    if (host_created == CUDA_SUCCESS) {
        cuMemRelease(host_handle);
    }

    // Managed memory
    long long before_managed = used();
    char* managed = nullptr;
    cudaMallocManaged(&managed, 11001);
    print("managed.used_delta_untouched", used() - before_managed);
    std::memset(managed, 1, 11001);
    print("managed.used_delta_touched", used() - before_managed);
    cudaFree(managed);

    // Arrays
    long long before_array = used();
    cudaChannelFormatDesc f = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaArray_t array = nullptr;
    cudaMallocArray(&array, &f, 1000, 1000);
    print("array.4000000.used_delta", used() - before_array);
    cudaFreeArray(array);

    // Rounding of small allocations, and the largest "small" one
    char* r1 = nullptr;
    char* r2 = nullptr;
    char* r3 = nullptr;
    char* r4 = nullptr;
    cudaMalloc(&r1, 1);
    cudaMalloc(&r2, 1);
    cudaMalloc(&r3, 513);
    cudaMalloc(&r4, 1);
    print("round.r1_mod_512", reinterpret_cast<uintptr_t>(r1) % 512);
    print("round.r1_mod_1024", reinterpret_cast<uintptr_t>(r1) % 1024);
    print("round.r2_minus_r1", r2 - r1);
    print("round.r3_minus_r2", r3 - r2);
    print("round.r4_minus_r3", r4 - r3);
    long long before_edge = used();
    char* edge = nullptr;
    cudaMalloc(&edge, 2 * kMiB - 100);
    print("edge.mod_2MiB", reinterpret_cast<uintptr_t>(edge) % (2 * kMiB));
    print("edge.used_delta", used() - before_edge);
    long long before_halves = used();
    char* h1 = nullptr;
    char* h2 = nullptr;
    cudaMalloc(&h1, kMiB + 1);
    cudaMalloc(&h2, kMiB + 1);
    print("halves.h1_mod_2MiB", reinterpret_cast<uintptr_t>(h1) % (2 * kMiB));
    print("halves.same_granule", (reinterpret_cast<uintptr_t>(h1) / (2 * kMiB)) ==
                                     (reinterpret_cast<uintptr_t>(h2) / (2 * kMiB)));
    print("halves.used_delta", used() - before_halves);
    for (char* p : {r1, r2, r3, r4, edge, h1, h2}) {
        cudaFree(p);
    }
    void* zero_host = reinterpret_cast<void*>(1);
    print_error("mallochost.zero.result", cudaMallocHost(&zero_host, 0));
    print("mallochost.zero.null", zero_host == nullptr);
    void* zero_managed = reinterpret_cast<void*>(1);
    print_error("mallocmanaged.zero.result", cudaMallocManaged(&zero_managed, 0));
    print("mallocmanaged.zero.null", zero_managed == nullptr);
    void* zero_async = reinterpret_cast<void*>(1);
    print_error("mallocasync.zero.result", cudaMallocAsync(&zero_async, 0, nullptr));
    print("mallocasync.zero.null", zero_async == nullptr);
    cudaGetLastError();
    CUdeviceptr bad_managed = 0;
    print_result("managed.flags_zero", cuMemAllocManaged(&bad_managed, 256, 0));
    char registered[8192];
    print_result("register.first", cuMemHostRegister(registered, sizeof(registered), 0));
    print_result("register.overlap", cuMemHostRegister(registered + 4096, 4096, 0));
    print_result("unregister.first", cuMemHostUnregister(registered));
    print_result("unregister.again", cuMemHostUnregister(registered));
    CUdeviceptr odd_va = 0;
    print_result("vmm.reserve_unaligned", cuMemAddressReserve(&odd_va, kMiB, 0, 0, 0));

    // Pool segments
    cudaMemPoolProps pool_props{};
    pool_props.allocType = cudaMemAllocationTypePinned;
    pool_props.location.type = cudaMemLocationTypeDevice;
    pool_props.location.id = 0;
    cudaMemPool_t own = nullptr;
    cudaMemPoolCreate(&own, &pool_props);
    void* p1 = nullptr;
    cudaMallocFromPoolAsync(&p1, kMiB, own, nullptr);
    cudaMemPoolGetAttribute(own, cudaMemPoolAttrReservedMemCurrent, &reserved);
    print("ownpool.reserved_1MiB", static_cast<long long>(reserved));
    void* p2 = nullptr;
    cudaMallocFromPoolAsync(&p2, 40 * kMiB, own, nullptr);
    cudaMemPoolGetAttribute(own, cudaMemPoolAttrReservedMemCurrent, &reserved);
    print("ownpool.reserved_plus_40MiB", static_cast<long long>(reserved));
    print("ownpool.p2_mod_2MiB", reinterpret_cast<uintptr_t>(p2) % (2 * kMiB));
    void* p3 = nullptr;
    cudaMallocFromPoolAsync(&p3, 11001, own, nullptr);
    print("ownpool.p3_minus_p1", static_cast<char*>(p3) - static_cast<char*>(p1));
    cudaFreeAsync(p1, nullptr);
    cudaFreeAsync(p2, nullptr);
    cudaFreeAsync(p3, nullptr);
    cudaStreamSynchronize(nullptr);
    cudaMemPoolGetAttribute(own, cudaMemPoolAttrReservedMemCurrent, &reserved);
    print("ownpool.reserved_after_sync", static_cast<long long>(reserved));
    cudaMemPoolDestroy(own);

    // Teardown
    CUcontext primary = nullptr;
    cuCtxGetCurrent(&primary);
    print_result("ctx.destroy_primary", cuCtxDestroy(primary));
    void* doomed = nullptr;
    cudaMalloc(&doomed, 5 * kMiB);
    void* pooled = nullptr;
    cudaMallocAsync(&pooled, 3 * kMiB, nullptr);
    long long before_reset = used();
    cudaDeviceReset();
    print("reset.freed", before_reset - used());
    print_error("reset.free_old", cudaFree(doomed));
    cudaGetLastError();
    print_error("reset.malloc_after", cudaMalloc(&doomed, 256));

    // The primary context after a driver-level reset
    CUdevice dev = 0;
    CUcontext first = nullptr;
    cuDevicePrimaryCtxRetain(&first, dev);
    cuCtxSetCurrent(first);
    CUdeviceptr before = 0;
    cuMemAlloc(&before, 4096);
    print_result("primary.reset", cuDevicePrimaryCtxReset(dev));
    unsigned flags = 0;
    int active = -1;
    cuDevicePrimaryCtxGetState(dev, &flags, &active);
    print("primary.active_after_reset", active);
    CUdeviceptr after = 0;
    print_result("primary.alloc_after_reset", cuMemAlloc(&after, 4096));
    CUcontext current = nullptr;
    cuCtxGetCurrent(&current);
    print("primary.still_current", current == first);
    CUcontext second = nullptr;
    print_result("primary.retain_after_reset", cuDevicePrimaryCtxRetain(&second, dev));
    print("primary.same_handle", second == first);
    print_result("primary.alloc_after_retain", cuMemAlloc(&after, 4096));
    cuCtxSetCurrent(second);
    print_result("primary.alloc_after_set_current", cuMemAlloc(&after, 4096));
    int releases = 0;
    while (cuDevicePrimaryCtxRelease(dev) == CUDA_SUCCESS && releases < 10) {
        ++releases;
    }
    print("primary.releases_until_error", releases);
    cuDevicePrimaryCtxGetState(dev, &flags, &active);
    print("primary.active_after_releases", active);
    print_result("primary.alloc_after_releases", cuMemAlloc(&after, 4096));
    return 0;
}
