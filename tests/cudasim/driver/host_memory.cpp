#include "host_memory.h"

#include "constants.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace cudasim::host_memory {

namespace {

constexpr int kReserveFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

void* to_ptr(uint64_t addr) {
    return reinterpret_cast<void*>(addr);
}

} // namespace

std::optional<uint64_t> reserve_address_space(uint64_t size, uint64_t alignment, uint64_t hint) {
    uint64_t padded = size + alignment;
    void* p = mmap(to_ptr(hint), padded, PROT_NONE, kReserveFlags, -1, 0);
    if (p == MAP_FAILED) {
        return std::nullopt;
    }
    auto start = reinterpret_cast<uint64_t>(p);
    uint64_t aligned = align_up(start, alignment);
    // Give back the padding on both sides so the reservation is exactly what was asked for.
    if (aligned > start) {
        munmap(p, aligned - start);
    }
    uint64_t tail = start + padded - (aligned + size);
    if (tail > 0) {
        munmap(to_ptr(aligned + size), tail);
    }
    return aligned;
}

bool back_with_memory(uint64_t addr, uint64_t size) {
    void* p = mmap(to_ptr(addr), size, PROT_READ | PROT_WRITE, kReserveFlags | MAP_FIXED, -1, 0);
    return p != MAP_FAILED;
}

bool back_with_file(uint64_t addr, uint64_t size, int fd, uint64_t offset) {
    void* p = mmap(to_ptr(addr), size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                   static_cast<off_t>(offset));
    return p != MAP_FAILED;
}

void return_to_reservation(uint64_t addr, uint64_t size) {
    // MAP_FIXED replaces the old mapping atomically, so no other thread can grab the hole.
    mmap(to_ptr(addr), size, PROT_NONE, kReserveFlags | MAP_FIXED, -1, 0);
}

void* allocate_pinned(uint64_t size) {
    void* p = mmap(nullptr, align_up(size, kHostPageSize), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? nullptr : p;
}

void free_pinned(void* ptr, uint64_t size) {
    munmap(ptr, align_up(size, kHostPageSize));
}

int create_memory_file(uint64_t size) {
    int fd = memfd_create("cudasim-vmm", MFD_CLOEXEC);
    if (fd < 0) {
        return -1;
    }
    if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

std::optional<FileIdentity> file_identity(int fd) {
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        return std::nullopt;
    }
    return FileIdentity{static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino)};
}

} // namespace cudasim::host_memory
