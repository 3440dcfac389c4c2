// The simulator's only contact with the operating system's memory.
//
// Simulated device addresses live inside one PROT_NONE reservation of the process's address
// space, so no host mapping can ever land on a simulated device pointer (a host pointer and a
// device pointer never compare equal, as on a real GPU) and touching device memory from the
// host faults. Managed memory and host-located VMM memory are made real by mapping pages over
// the reservation; pinned host memory is ordinary anonymous memory.
#pragma once

#include <cstdint>
#include <optional>

namespace cudasim::host_memory {

// Reserves [result, result + size) aligned to `alignment`, preferring `hint`.
std::optional<uint64_t> reserve_address_space(uint64_t size, uint64_t alignment, uint64_t hint);

// Turns part of the reservation into zeroed read-write memory (pages are committed on touch).
bool back_with_memory(uint64_t addr, uint64_t size);
// Maps `size` bytes of `fd` from `offset` shared and read-write over part of the reservation.
bool back_with_file(uint64_t addr, uint64_t size, int fd, uint64_t offset);
// Drops whatever backs the range and makes it reserved and inaccessible again.
void return_to_reservation(uint64_t addr, uint64_t size);

// Page-aligned real memory for pinned host allocations; `size` is rounded up to pages.
void* allocate_pinned(uint64_t size);
void free_pinned(void* ptr, uint64_t size);

// An anonymous in-memory file of `size` bytes (sparse: untouched pages cost nothing): the
// shareable identity of a VMM allocation, and the backing of host-located ones. Its name
// records `device` (-1: host memory), so that a process the descriptor is passed to can tell
// what it refers to. Returns -1 on failure.
int create_memory_file(uint64_t size, int device);
// (device, inode) of the file behind `fd`, so an imported descriptor can be traced back to its
// allocation; nullopt if `fd` is not open.
struct FileIdentity {
    uint64_t device;
    uint64_t inode;
    bool operator==(const FileIdentity&) const = default;
};
std::optional<FileIdentity> file_identity(int fd);
// What create_memory_file (in this or another process) made `fd` from; nullopt when `fd` is
// not such a file.
struct MemoryFile {
    uint64_t size;
    int device; // -1: host memory
};
std::optional<MemoryFile> describe_memory_file(int fd);

} // namespace cudasim::host_memory
