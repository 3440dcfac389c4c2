// Virtual memory management: reservations, physical handles, mappings and their accounting.
#include "driver_test_support.h"
#include "support/fd_passing.h"

#include <cstring>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace cudasim_test;

namespace {

CUmemAllocationProp device_prop(int device, bool exportable = false) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    if (exportable) {
        prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    }
    return prop;
}

// A device-0 handle of `bytes` that can be exported as a POSIX file descriptor.
CUmemGenericAllocationHandle create_exportable(uint64_t bytes) {
    CUmemAllocationProp prop = device_prop(0, /*exportable=*/true);
    CUmemGenericAllocationHandle handle = 0;
    REQUIRE(cuMemCreate(&handle, bytes, &prop, 0) == CUDA_SUCCESS);
    return handle;
}

int export_fd(CUmemGenericAllocationHandle handle) {
    int fd = -1;
    REQUIRE(cuMemExportToShareableHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                         0) == CUDA_SUCCESS);
    REQUIRE(fd >= 0);
    return fd;
}

CUmemGenericAllocationHandle import_fd(int fd) {
    CUmemGenericAllocationHandle imported = 0;
    REQUIRE(cuMemImportFromShareableHandle(&imported, reinterpret_cast<void*>(intptr_t{fd}),
                                           CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) ==
            CUDA_SUCCESS);
    return imported;
}

// Exported and imported back in this process: a second handle to the same memory.
CUmemGenericAllocationHandle reimport(CUmemGenericAllocationHandle handle) {
    int fd = export_fd(handle);
    CUmemGenericAllocationHandle imported = import_fd(fd);
    close(fd);
    return imported;
}

CUmemAccessDesc read_write(int device) {
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = device;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    return access;
}

} // namespace

TEST_CASE("granularity is 2 MiB and reservations cost no memory", "[vmm]") {
    PrimaryContext primary;
    CUmemAllocationProp prop = device_prop(0);
    size_t granularity = 0;
    REQUIRE(cuMemGetAllocationGranularity(&granularity, &prop,
                                          CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) == CUDA_SUCCESS);
    CHECK(granularity == kGranule);

    const uint64_t used_before = used_bytes();
    CUdeviceptr va = 0;
    REQUIRE(cuMemAddressReserve(&va, 64 * kMiB, 0, 0, 0) == CUDA_SUCCESS);
    CHECK(granule_aligned(va));
    CHECK(used_bytes() == used_before);
    CHECK(cuMemAddressFree(va, 32 * kMiB) == CUDA_ERROR_INVALID_VALUE); // not the whole range
    CHECK(cuMemAddressFree(va, 64 * kMiB) == CUDA_SUCCESS);
    CHECK(cuMemAddressReserve(&va, kMiB, 0, 0, 0) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("physical memory is freed only when released and unmapped", "[vmm]") {
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();
    CUdeviceptr va = 0;
    REQUIRE(cuMemAddressReserve(&va, 8 * kMiB, 0, 0, 0) == CUDA_SUCCESS);
    CUmemAllocationProp prop = device_prop(0);
    CUmemGenericAllocationHandle handle = 0;
    REQUIRE(cuMemCreate(&handle, 4 * kMiB, &prop, 0) == CUDA_SUCCESS);
    CHECK(used_bytes() - used_before == 4 * kMiB);

    REQUIRE(cuMemMap(va, 4 * kMiB, 0, handle, 0) == CUDA_SUCCESS);
    CUmemAccessDesc access = read_write(0);
    REQUIRE(cuMemSetAccess(va, 4 * kMiB, &access, 1) == CUDA_SUCCESS);
    CHECK(used_bytes() - used_before == 4 * kMiB); // mapping adds nothing

    int ordinal = -1;
    REQUIRE(cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, va + 100) ==
            CUDA_SUCCESS);
    CHECK(ordinal == 0);
    size_t range = 0;
    REQUIRE(cuPointerGetAttribute(&range, CU_POINTER_ATTRIBUTE_RANGE_SIZE, va + 100) ==
            CUDA_SUCCESS);
    CHECK(range == 4 * kMiB);

    SECTION("release first, then unmap") {
        REQUIRE(cuMemRelease(handle) == CUDA_SUCCESS);
        CHECK(used_bytes() - used_before == 4 * kMiB); // the mapping keeps it alive
        REQUIRE(cuMemUnmap(va, 4 * kMiB) == CUDA_SUCCESS);
        CHECK(used_bytes() == used_before);
    }
    SECTION("unmap first, then release") {
        REQUIRE(cuMemUnmap(va, 4 * kMiB) == CUDA_SUCCESS);
        CHECK(used_bytes() - used_before == 4 * kMiB); // the handle keeps it alive
        REQUIRE(cuMemRelease(handle) == CUDA_SUCCESS);
        CHECK(used_bytes() == used_before);
    }
    CHECK(cuMemRelease(handle) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemAddressFree(va, 8 * kMiB) == CUDA_SUCCESS);
}

TEST_CASE("one handle mapped twice, and mapping errors", "[vmm]") {
    PrimaryContext primary;
    CUdeviceptr va = 0;
    REQUIRE(cuMemAddressReserve(&va, 16 * kMiB, 0, 0, 0) == CUDA_SUCCESS);
    CUmemAllocationProp prop = device_prop(0);
    CUmemGenericAllocationHandle handle = 0;
    REQUIRE(cuMemCreate(&handle, 4 * kMiB, &prop, 0) == CUDA_SUCCESS);

    REQUIRE(cuMemMap(va, 4 * kMiB, 0, handle, 0) == CUDA_SUCCESS);
    REQUIRE(cuMemMap(va + 4 * kMiB, 2 * kMiB, 2 * kMiB, handle, 0) == CUDA_SUCCESS);
    CHECK(cuMemMap(va + 2 * kMiB, 2 * kMiB, 0, handle, 0) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemMap(va + 14 * kMiB, 4 * kMiB, 0, handle, 0) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemMap(va + 8 * kMiB, 4 * kMiB, 2 * kMiB, handle, 0) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemUnmap(va, 2 * kMiB) == CUDA_ERROR_INVALID_VALUE);        // part of a mapping
    CHECK(cuMemAddressFree(va, 16 * kMiB) == CUDA_ERROR_INVALID_VALUE); // still mapped
    CUmemAccessDesc access = read_write(0);
    CHECK(cuMemSetAccess(va, 8 * kMiB, &access, 1) == CUDA_ERROR_INVALID_VALUE); // gap

    // Unmapping two adjacent mappings at once.
    REQUIRE(cuMemUnmap(va, 6 * kMiB) == CUDA_SUCCESS);
    REQUIRE(cuMemRelease(handle) == CUDA_SUCCESS);
    REQUIRE(cuMemAddressFree(va, 16 * kMiB) == CUDA_SUCCESS);

    CHECK(cuMemCreate(&handle, 3 * kMiB, &prop, 0) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemCreate(&handle, configured_capacity() + kGranule, &prop, 0) ==
          CUDA_ERROR_OUT_OF_MEMORY);
}

TEST_CASE("host-located handles are real shared memory, not device memory", "[vmm]") {
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
    CUmemGenericAllocationHandle handle = 0;
    REQUIRE(cuMemCreate(&handle, 2 * kMiB, &prop, 0) == CUDA_SUCCESS);
    CHECK(used_bytes() == used_before);

    CUdeviceptr va = 0;
    REQUIRE(cuMemAddressReserve(&va, 4 * kMiB, 0, 0, 0) == CUDA_SUCCESS);
    REQUIRE(cuMemMap(va, 2 * kMiB, 0, handle, 0) == CUDA_SUCCESS);
    REQUIRE(cuMemMap(va + 2 * kMiB, 2 * kMiB, 0, handle, 0) == CUDA_SUCCESS);
    std::strcpy(reinterpret_cast<char*>(va), "written through the first mapping");
    CHECK(std::strcmp(reinterpret_cast<char*>(va + 2 * kMiB),
                      "written through the first mapping") == 0);
    unsigned type = 0;
    REQUIRE(cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, va) == CUDA_SUCCESS);
    CHECK(type == CU_MEMORYTYPE_HOST);

    REQUIRE(cuMemUnmap(va, 4 * kMiB) == CUDA_SUCCESS);
    REQUIRE(cuMemRelease(handle) == CUDA_SUCCESS);
    REQUIRE(cuMemAddressFree(va, 4 * kMiB) == CUDA_SUCCESS);
    CHECK(used_bytes() == used_before);
}

TEST_CASE("export and import refer to the same physical memory", "[vmm]") {
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();
    CUmemGenericAllocationHandle original = create_exportable(2 * kMiB);
    CUmemGenericAllocationHandle imported = reimport(original);
    CHECK(imported != original);
    CHECK(used_bytes() - used_before == 2 * kMiB); // counted once

    CUmemAllocationProp back{};
    REQUIRE(cuMemGetAllocationPropertiesFromHandle(&back, imported) == CUDA_SUCCESS);
    CHECK(back.location.id == 0);

    REQUIRE(cuMemRelease(original) == CUDA_SUCCESS);
    CHECK(used_bytes() - used_before == 2 * kMiB); // the imported handle keeps it
    REQUIRE(cuMemRelease(imported) == CUDA_SUCCESS);
    CHECK(used_bytes() == used_before);

    CUmemAllocationProp plain = device_prop(0);
    CUmemGenericAllocationHandle not_exportable = 0;
    REQUIRE(cuMemCreate(&not_exportable, 2 * kMiB, &plain, 0) == CUDA_SUCCESS);
    int fd = -1;
    CHECK(cuMemExportToShareableHandle(&fd, not_exportable,
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                       0) == CUDA_ERROR_INVALID_VALUE);
    CHECK(cuMemRelease(not_exportable) == CUDA_SUCCESS);
}

TEST_CASE("retaining the handle behind a mapped address", "[vmm]") {
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();
    CUdeviceptr va = 0;
    REQUIRE(cuMemAddressReserve(&va, 2 * kMiB, 0, 0, 0) == CUDA_SUCCESS);
    CUmemAllocationProp prop = device_prop(0);
    CUmemGenericAllocationHandle handle = 0;
    REQUIRE(cuMemCreate(&handle, 2 * kMiB, &prop, 0) == CUDA_SUCCESS);
    REQUIRE(cuMemMap(va, 2 * kMiB, 0, handle, 0) == CUDA_SUCCESS);
    REQUIRE(cuMemRelease(handle) == CUDA_SUCCESS);

    CUmemGenericAllocationHandle retained = 0;
    REQUIRE(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(va + 4096)) ==
            CUDA_SUCCESS);
    CHECK(retained == handle);
    REQUIRE(cuMemUnmap(va, 2 * kMiB) == CUDA_SUCCESS);
    CHECK(used_bytes() - used_before == 2 * kMiB); // the retained handle keeps it
    REQUIRE(cuMemRelease(retained) == CUDA_SUCCESS);
    CHECK(used_bytes() == used_before);
    REQUIRE(cuMemAddressFree(va, 2 * kMiB) == CUDA_SUCCESS);
}

TEST_CASE("NCCL's free: retain by address while the handle is held, release twice", "[vmm]") {
    // ncclCuMemAlloc keeps its creation reference; ncclCuMemFree retains the handle behind the
    // pointer, releases it, unmaps, releases again and frees the range.
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();
    CUmemGenericAllocationHandle handle = create_exportable(4 * kMiB);
    CUdeviceptr va = 0;
    REQUIRE(cuMemAddressReserve(&va, 4 * kMiB, 0, 0, 0) == CUDA_SUCCESS);
    REQUIRE(cuMemMap(va, 4 * kMiB, 0, handle, 0) == CUDA_SUCCESS);
    CUmemAccessDesc access = read_write(0);
    REQUIRE(cuMemSetAccess(va, 4 * kMiB, &access, 1) == CUDA_SUCCESS);
    close(export_fd(handle));

    CUmemGenericAllocationHandle retained = 0;
    REQUIRE(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(va + 3 * kMiB)) ==
            CUDA_SUCCESS);
    CHECK(retained == handle);
    REQUIRE(cuMemRelease(retained) == CUDA_SUCCESS);
    CHECK(used_bytes() - used_before == 4 * kMiB); // the creation reference is still held
    REQUIRE(cuMemUnmap(va, 4 * kMiB) == CUDA_SUCCESS);
    CHECK(used_bytes() - used_before == 4 * kMiB);
    REQUIRE(cuMemRelease(handle) == CUDA_SUCCESS); // the last reference
    CHECK(used_bytes() == used_before);
    REQUIRE(cuMemAddressFree(va, 4 * kMiB) == CUDA_SUCCESS);
    // Every reference is gone: the value is no longer a handle.
    CHECK(cuMemRelease(handle) == CUDA_ERROR_INVALID_VALUE);
}

TEST_CASE("retain fails where nothing is mapped and leaves the handle alone", "[vmm]") {
    PrimaryContext primary;
    CUdeviceptr va = 0;
    REQUIRE(cuMemAddressReserve(&va, 2 * kMiB, 0, 0, 0) == CUDA_SUCCESS);
    CUmemGenericAllocationHandle out = 0x1234;
    CHECK(cuMemRetainAllocationHandle(&out, reinterpret_cast<void*>(va)) ==
          CUDA_ERROR_INVALID_VALUE);
    CHECK(out == 0x1234);
    REQUIRE(cuMemAddressFree(va, 2 * kMiB) == CUDA_SUCCESS);
}

TEST_CASE("an imported handle is one more reference - retain gives the handle it was mapped with",
          "[vmm]") {
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();
    CUmemGenericAllocationHandle original = create_exportable(2 * kMiB);
    CUmemGenericAllocationHandle imported = reimport(original);
    CUdeviceptr va = 0;
    REQUIRE(cuMemAddressReserve(&va, 2 * kMiB, 0, 0, 0) == CUDA_SUCCESS);
    REQUIRE(cuMemMap(va, 2 * kMiB, 0, imported, 0) == CUDA_SUCCESS);
    REQUIRE(cuMemRelease(original) == CUDA_SUCCESS);

    CUmemGenericAllocationHandle retained = 0;
    REQUIRE(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(va)) == CUDA_SUCCESS);
    CHECK(retained == imported);
    REQUIRE(cuMemRelease(retained) == CUDA_SUCCESS);
    REQUIRE(cuMemUnmap(va, 2 * kMiB) == CUDA_SUCCESS);
    CHECK(used_bytes() - used_before == 2 * kMiB); // the import's own reference
    REQUIRE(cuMemRelease(imported) == CUDA_SUCCESS);
    CHECK(used_bytes() == used_before);
    REQUIRE(cuMemAddressFree(va, 2 * kMiB) == CUDA_SUCCESS);
}

namespace {

// A child process (its own simulator state from here on) creates `bytes` of exportable memory
// where `prop` says, fills host-located memory with `fill`, sends the descriptor and keeps the
// memory until the parent says it is done. Exits 0 when every call succeeded.
pid_t export_from_child(int socket, const CUmemAllocationProp& prop, uint64_t bytes,
                        unsigned char fill) {
    pid_t pid = fork();
    if (pid != 0) {
        return pid;
    }
    int failed = 0;
    CUmemGenericAllocationHandle handle = 0;
    failed |= cuMemCreate(&handle, bytes, &prop, 0) != CUDA_SUCCESS;
    if (prop.location.type != CU_MEM_LOCATION_TYPE_DEVICE && !failed) {
        CUdeviceptr va = 0;
        failed |= cuMemAddressReserve(&va, bytes, 0, 0, 0) != CUDA_SUCCESS;
        failed |= cuMemMap(va, bytes, 0, handle, 0) != CUDA_SUCCESS;
        if (!failed) {
            std::memset(reinterpret_cast<void*>(va), fill, bytes);
        }
    }
    int fd = -1;
    failed |= cuMemExportToShareableHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                           0) != CUDA_SUCCESS;
    gmt::test::sendFd(socket, fd);
    char done = 0;
    (void)!read(socket, &done, 1);
    _exit(failed);
}

int wait_child(pid_t pid) {
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

} // namespace

TEST_CASE("memory exported by another process imports as that process's memory", "[vmm]") {
    PrimaryContext primary;
    const uint64_t used_before = used_bytes();
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    pid_t child = export_from_child(sv[1], device_prop(1, /*exportable=*/true), 6 * kMiB, 0);
    int fd = gmt::test::receiveFd(sv[0]);
    REQUIRE(fd >= 0);
    CUmemGenericAllocationHandle imported = import_fd(fd);
    close(fd);
    CHECK(used_bytes() == used_before); // charged to the exporter, not here
    CUmemAllocationProp back{};
    REQUIRE(cuMemGetAllocationPropertiesFromHandle(&back, imported) == CUDA_SUCCESS);
    CHECK(back.location.type == CU_MEM_LOCATION_TYPE_DEVICE);
    CHECK(back.location.id == 1);
    CUdeviceptr va = 0;
    REQUIRE(cuMemAddressReserve(&va, 8 * kMiB, 0, 0, 0) == CUDA_SUCCESS);
    CHECK(cuMemMap(va, 8 * kMiB, 0, imported, 0) == CUDA_ERROR_INVALID_VALUE); // 6 MiB only
    REQUIRE(cuMemMap(va, 6 * kMiB, 0, imported, 0) == CUDA_SUCCESS);
    REQUIRE(cuMemUnmap(va, 6 * kMiB) == CUDA_SUCCESS);
    REQUIRE(cuMemRelease(imported) == CUDA_SUCCESS);
    CHECK(used_bytes() == used_before);
    REQUIRE(cuMemAddressFree(va, 8 * kMiB) == CUDA_SUCCESS);

    REQUIRE(write(sv[0], "x", 1) == 1);
    CHECK(wait_child(child) == 0);
    close(sv[0]);
    close(sv[1]);
}

TEST_CASE("host memory exported by another process is shared with it once imported", "[vmm]") {
    PrimaryContext primary;
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    pid_t child = export_from_child(sv[1], prop, 2 * kMiB, 0x5a);
    int fd = gmt::test::receiveFd(sv[0]);
    REQUIRE(fd >= 0);
    CUmemGenericAllocationHandle imported = import_fd(fd);
    close(fd);
    CUdeviceptr va = 0;
    REQUIRE(cuMemAddressReserve(&va, 2 * kMiB, 0, 0, 0) == CUDA_SUCCESS);
    REQUIRE(cuMemMap(va, 2 * kMiB, 0, imported, 0) == CUDA_SUCCESS);
    const auto* bytes = reinterpret_cast<const unsigned char*>(va);
    CHECK(bytes[0] == 0x5a); // what the exporter wrote
    CHECK(bytes[2 * kMiB - 1] == 0x5a);
    REQUIRE(cuMemUnmap(va, 2 * kMiB) == CUDA_SUCCESS);
    REQUIRE(cuMemRelease(imported) == CUDA_SUCCESS);
    REQUIRE(cuMemAddressFree(va, 2 * kMiB) == CUDA_SUCCESS);

    REQUIRE(write(sv[0], "x", 1) == 1);
    CHECK(wait_child(child) == 0);
    close(sv[0]);
    close(sv[1]);
}
