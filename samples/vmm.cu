// vmm: virtual memory management, the way PyTorch's expandable segments use it.
//
// Reserve 64 MiB of address space, then grow a buffer inside it by mapping two physical
// allocations (8 MiB, then 4 MiB) back to back, run a kernel over the 12 MiB, and tear it all
// down. The driver functions come from cudaGetDriverEntryPointByVersion, so the program needs
// no -lcuda (PyTorch gets them the same way).
#include "check.h"

#include <cudaTypedefs.h>

#define CHECK_CU(call)                                                                             \
    do {                                                                                           \
        CUresult check_result_ = (call);                                                           \
        if (check_result_ != CUDA_SUCCESS) {                                                       \
            std::fprintf(stderr, "%s:%d: %s failed: CUresult %d\n", __FILE__, __LINE__, #call,     \
                         static_cast<int>(check_result_));                                         \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

// Fetches a driver function by name, at the ABI version its PFN type was written for.
template <typename Pfn> static Pfn driver_function(const char* name, unsigned version) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult status{};
    CHECK(cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &status));
    if (fn == nullptr || status != cudaDriverEntryPointSuccess) {
        std::fprintf(stderr, "vmm: driver function %s is not available\n", name);
        std::exit(1);
    }
    return reinterpret_cast<Pfn>(fn);
}

__global__ void fill(float* data, size_t n) {
    size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
    if (i < n) {
        data[i] = 1.0f;
    }
}

int main() {
    print_device("vmm");
    CHECK(cudaFree(nullptr)); // creates the context the driver calls below work in

    auto granularity_of = driver_function<PFN_cuMemGetAllocationGranularity_v10020>(
        "cuMemGetAllocationGranularity", 10020);
    auto reserve = driver_function<PFN_cuMemAddressReserve_v10020>("cuMemAddressReserve", 10020);
    auto create = driver_function<PFN_cuMemCreate_v10020>("cuMemCreate", 10020);
    auto map = driver_function<PFN_cuMemMap_v10020>("cuMemMap", 10020);
    auto set_access = driver_function<PFN_cuMemSetAccess_v10020>("cuMemSetAccess", 10020);
    auto unmap = driver_function<PFN_cuMemUnmap_v10020>("cuMemUnmap", 10020);
    auto release = driver_function<PFN_cuMemRelease_v10020>("cuMemRelease", 10020);
    auto address_free = driver_function<PFN_cuMemAddressFree_v10020>("cuMemAddressFree", 10020);

    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t granularity = 0;
    CHECK_CU(granularity_of(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));

    const size_t reserved_bytes = 64ull << 20;
    const size_t sizes[2] = {8ull << 20, 4ull << 20}; // multiples of the 2 MiB granularity
    CUdeviceptr base = 0;
    CHECK_CU(reserve(&base, reserved_bytes, granularity, 0, 0));

    CUmemGenericAllocationHandle handles[2] = {};
    size_t mapped = 0;
    for (int i = 0; i < 2; ++i) {
        CHECK_CU(create(&handles[i], sizes[i], &prop, 0));
        CHECK_CU(map(base + mapped, sizes[i], 0, handles[i], 0));
        mapped += sizes[i];
    }
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CHECK_CU(set_access(base, mapped, &access, 1));
    std::printf("vmm: mapped %zu bytes at %#llx inside a %zu-byte reservation\n", mapped,
                static_cast<unsigned long long>(base), reserved_bytes);

    const size_t n = mapped / sizeof(float);
    fill<<<static_cast<unsigned>((n + 255) / 256), 256>>>(reinterpret_cast<float*>(base), n);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());

    CHECK_CU(unmap(base, mapped));
    for (CUmemGenericAllocationHandle handle : handles) {
        CHECK_CU(release(handle));
    }
    CHECK_CU(address_free(base, reserved_bytes));
    size_t free = 0;
    size_t total = 0;
    CHECK(cudaMemGetInfo(&free, &total));
    std::printf("vmm: everything released; %zu of %zu bytes free\n", free, total);
    return 0;
}
