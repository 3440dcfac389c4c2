// What NCCL does with GPU memory, on the driver API, for the CLI tests: buffers from
// ncclCuMemAlloc (create exportable, reserve, map, set access), shared with a peer rank by
// exporting a file descriptor that the peer imports and maps, and freed by ncclCuMemFree
// (retain the handle by address, release, unmap, release, free the range).
//
//   nccl_like launch [leak-on-rank1]   starts ranks 0 and 1 as a launcher would (RANK,
//                                      LOCAL_RANK, WORLD_SIZE); the launcher never touches
//                                      CUDA. Rank 1 maps a buffer of rank 0's; with
//                                      leak-on-rank1 it also leaks 1 MiB (cuMemAlloc).
//   nccl_like single                   one process: two buffers, one mapped again for a peer
//                                      in the same process, the other imported back from
//                                      its own export; everything freed
#include "support/fd_passing.h"
#include "support/nccl_like_vmm.h"

#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using namespace gmt::test::nccl_like;

constexpr size_t kMiB = size_t{1} << 20;

void setUp() {
    check(cuInit(0), "cuInit");
    CUcontext ctx = nullptr;
    check(cuDevicePrimaryCtxRetain(&ctx, 0), "primary context");
    check(cuCtxSetCurrent(ctx), "set context");
}

int exportHandle(CUmemGenericAllocationHandle handle) {
    int fd = -1;
    check(cuMemExportToShareableHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
          "export");
    return fd;
}

// As NCCL's p2p transport maps another process's buffer: import and map; the import's
// reference is kept until the buffer is freed (cuMemFreeLikeNccl drops it).
__attribute__((noinline)) CUdeviceptr importPeerBuffer(int fd, size_t bytes) {
    CUmemGenericAllocationHandle handle = 0;
    check(cuMemImportFromShareableHandle(&handle, reinterpret_cast<void*>(intptr_t{fd}),
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
          "import");
    return mapHandle(handle, bytes);
}

// As NCCL maps a buffer of a rank in the same process: a reference retained for the peer,
// the same handle mapped again, the reference given back at once (the mapping keeps the
// memory); that mapping is later just unmapped.
__attribute__((noinline)) CUdeviceptr mapForSameProcessPeer(CUdeviceptr owner, size_t bytes) {
    CUmemGenericAllocationHandle handle = 0;
    check(cuMemRetainAllocationHandle(&handle, reinterpret_cast<void*>(owner)), "retain (peer)");
    CUdeviceptr ptr = mapHandle(handle, bytes);
    check(cuMemRelease(handle), "release (peer)");
    return ptr;
}

__attribute__((noinline)) void unmapLikeNccl(CUdeviceptr ptr, size_t bytes) {
    check(cuMemUnmap(ptr, bytes), "cuMemUnmap (peer)");
    check(cuMemAddressFree(ptr, bytes), "cuMemAddressFree (peer)");
}

__attribute__((noinline)) void leakOnPurpose() {
    CUdeviceptr p = 0;
    check(cuMemAlloc(&p, kMiB), "cuMemAlloc");
}

void sendFd(int socket, int fd) {
    if (!gmt::test::sendFd(socket, fd)) {
        std::perror("nccl_like: sendmsg");
        std::exit(11);
    }
}

int receiveFd(int socket) {
    int fd = gmt::test::receiveFd(socket);
    if (fd < 0) {
        std::fprintf(stderr, "nccl_like: no descriptor from rank 0\n");
        std::exit(11);
    }
    return fd;
}

int rank0(int socket) {
    setUp();
    CUmemGenericAllocationHandle handle = 0;
    CUdeviceptr buffer = cuMemAllocLikeNccl(8 * kMiB, &handle);
    int fd = exportHandle(handle);
    sendFd(socket, fd);
    close(fd);
    char done = 0;
    if (read(socket, &done, 1) != 1) { // rank 1 has let go of the buffer
        return 12;
    }
    cuMemFreeLikeNccl(buffer, 8 * kMiB);
    return 0;
}

int rank1(int socket, bool leak) {
    setUp();
    CUmemGenericAllocationHandle handle = 0;
    CUdeviceptr own = cuMemAllocLikeNccl(2 * kMiB, &handle);
    int fd = receiveFd(socket);
    CUdeviceptr peer = importPeerBuffer(fd, 8 * kMiB);
    close(fd);
    if (leak) {
        leakOnPurpose();
    }
    cuMemFreeLikeNccl(peer, 8 * kMiB);
    cuMemFreeLikeNccl(own, 2 * kMiB);
    return write(socket, "d", 1) == 1 ? 0 : 12;
}

int launch(bool leak) {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        return 13;
    }
    pid_t pids[2];
    for (int rank = 0; rank < 2; ++rank) {
        pids[rank] = fork();
        if (pids[rank] == 0) {
            // A fresh process per rank, as torchrun starts them: the rank comes from the
            // environment the recorder reads.
            setenv("RANK", std::to_string(rank).c_str(), 1);
            setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
            setenv("WORLD_SIZE", "2", 1);
            close(sv[1 - rank]);
            std::_Exit(rank == 0 ? rank0(sv[0]) : rank1(sv[1], leak));
        }
    }
    close(sv[0]);
    close(sv[1]);
    int failed = 0;
    for (pid_t pid : pids) {
        int status = 0;
        waitpid(pid, &status, 0);
        failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    return failed;
}

int single() {
    setUp();
    CUmemGenericAllocationHandle a = 0, b = 0;
    CUdeviceptr pa = cuMemAllocLikeNccl(4 * kMiB, &a);
    CUdeviceptr pb = cuMemAllocLikeNccl(2 * kMiB, &b);
    CUdeviceptr peer = mapForSameProcessPeer(pb, 2 * kMiB);
    int fd = exportHandle(a);
    CUdeviceptr again = importPeerBuffer(fd, 4 * kMiB); // this process's own memory
    close(fd);
    unmapLikeNccl(peer, 2 * kMiB);
    cuMemFreeLikeNccl(again, 4 * kMiB);
    cuMemFreeLikeNccl(pb, 2 * kMiB);
    cuMemFreeLikeNccl(pa, 4 * kMiB);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    std::string mode = argc > 1 ? argv[1] : "single";
    if (mode == "launch") {
        return launch(argc > 2 && std::string(argv[2]) == "leak-on-rank1");
    }
    if (mode == "single") {
        return single();
    }
    std::fprintf(stderr, "nccl_like: unknown mode %s\n", mode.c_str());
    return 2;
}
