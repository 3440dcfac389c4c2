#include "host_memory.h"

#include "constants.h"

#include <string>
#include <string_view>
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

namespace {
constexpr char kFilePrefix[] = "cudasim-vmm-";
} // namespace

int create_memory_file(uint64_t size, int device) {
    std::string name = kFilePrefix + (device < 0 ? std::string("host") : std::to_string(device));
    int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
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

std::optional<MemoryFile> describe_memory_file(int fd) {
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0) {
        return std::nullopt;
    }
    // A memfd's link reads "/memfd:NAME (deleted)".
    char link[256] = {};
    std::string path = "/proc/self/fd/" + std::to_string(fd);
    ssize_t n = readlink(path.c_str(), link, sizeof link - 1);
    const std::string expected = std::string("/memfd:") + kFilePrefix;
    if (n <= 0 ||
        std::string_view(link, static_cast<size_t>(n)).substr(0, expected.size()) != expected) {
        return std::nullopt;
    }
    std::string_view where(link + expected.size());
    where = where.substr(0, where.find(' '));
    int device = -1;
    if (where.empty()) {
        return std::nullopt;
    }
    if (where != "host") {
        device = 0;
        for (char c : where) {
            if (c < '0' || c > '9' || device > 1000) {
                return std::nullopt;
            }
            device = device * 10 + (c - '0');
        }
    }
    return MemoryFile{static_cast<uint64_t>(st.st_size), device};
}

} // namespace cudasim::host_memory
