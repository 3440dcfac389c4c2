#include "trace_file.h"

#include "logging.h"
#include "printable.h"

#include <gpumemtrace/format/aggregate.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

namespace gmt::preload {
namespace {

std::string withSuffix(const std::string& path, int n) {
    if (n == 0) {
        return path;
    }
    size_t slash = path.rfind('/');
    size_t dot = path.rfind('.');
    std::string suffix = "." + std::to_string(n);
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
        return path + suffix;
    }
    return path.substr(0, dot) + suffix + path.substr(dot);
}

// True when the file may grow to `size` bytes without exceeding RLIMIT_FSIZE, which the
// program may change at any time.
bool withinSizeLimit(uint64_t size) {
    rlimit lim{};
    return getrlimit(RLIMIT_FSIZE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY ||
           size <= lim.rlim_cur;
}

// pwrite of all `size` bytes at `end`, which it advances past what was written.
bool writeAll(int fd, const void* data, size_t size, uint64_t& end) {
    auto* p = static_cast<const uint8_t*>(data);
    while (size > 0) {
        ssize_t n = ::pwrite(fd, p, size, static_cast<off_t>(end));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        p += n;
        size -= static_cast<size_t>(n);
        end += static_cast<uint64_t>(n);
    }
    return true;
}

} // namespace

TraceFile::~TraceFile() {
    close();
}

bool TraceFile::create(const std::string& path, uint32_t ring_slots, std::string& why,
                       uint64_t checkpoint_region) {
    int fd = -1;
    std::string chosen;
    for (int n = 0; n < 1000 && fd < 0; ++n) {
        chosen = withSuffix(path, n);
        fd = ::open(chosen.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) {
            why = chosen == path ? std::strerror(errno) : chosen + ": " + std::strerror(errno);
            return false;
        }
    }
    if (fd < 0) {
        why = "no free name for it (.1 to .999 are taken too)";
        return false;
    }
    if (chosen != path) {
        logger().warn("{} exists; writing the trace to {}", printable(path), printable(chosen));
    }
    size_t map_size = format::kPrologueSize + size_t{ring_slots} * format::kSlotSize;
    // Allocate every block of the mapping now: a full file system must fail here, with a
    // message, and not as SIGBUS at the first store into the ring.
    int err =
        withinSizeLimit(map_size) ? posix_fallocate(fd, 0, static_cast<off_t>(map_size)) : EFBIG;
    if (err != 0) {
        why = "cannot reserve " + std::to_string(map_size) + " bytes for " + chosen + ": " +
              std::strerror(err);
        ::close(fd);
        ::unlink(chosen.c_str());
        return false;
    }
    void* map = mmap(nullptr, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        why = "cannot map " + chosen + ": " + std::strerror(errno);
        ::close(fd);
        ::unlink(chosen.c_str());
        return false;
    }
    fd_ = fd;
    map_ = static_cast<uint8_t*>(map);
    map_size_ = map_size;
    ring_slots_ = ring_slots;
    // The checkpoint regions are not allocated ahead: a checkpoint is written with pwrite,
    // which fails cleanly, and most of a region stays a hole.
    checkpoint_region_ = checkpoint_region;
    log_end_ = map_size + 2 * checkpoint_region;
    path_ = chosen;

    format::Prologue& p = prologue();
    std::memcpy(p.magic, format::kMagic, sizeof p.magic);
    p.format_version = format::kFormatVersion;
    p.prologue_size = sizeof(format::Prologue);
    p.ring_offset = format::kPrologueSize;
    p.ring_slots = ring_slots;
    p.slot_size = format::kSlotSize;
    p.log_offset = log_end_;
    p.dropped_events = 0;
    p.flags = checkpoint_region ? format::kPrologueAggregated : 0;
    p.checksum = format::prologueChecksum(p);
    return true;
}

bool TraceFile::append(const void* data, size_t size) {
    if (fd_ < 0 || !withinSizeLimit(log_end_ + size)) {
        return false;
    }
    uint64_t end = log_end_;
    if (!writeAll(fd_, data, size, end)) {
        // A frame written in part would read as a torn frame: take it back.
        if (end != log_end_) {
            int keep = errno;
            (void)!::ftruncate(fd_, static_cast<off_t>(log_end_));
            errno = keep;
        }
        return false;
    }
    log_end_ = end;
    return true;
}

bool TraceFile::writeCheckpoint(int index, const void* data, size_t size) {
    const uint64_t at = format::kPrologueSize + uint64_t{ring_slots_} * format::kSlotSize +
                        uint64_t(index) * checkpoint_region_;
    if (fd_ < 0 || size > checkpoint_region_ || !withinSizeLimit(at + size)) {
        return false;
    }
    uint64_t end = at;
    // Written in part, its checksum fails: the other region holds the previous one.
    return writeAll(fd_, data, size, end);
}

void TraceFile::markLogFailed(bool out_of_memory) {
    if (map_) {
        std::atomic_ref<uint32_t>(prologue().flags)
            .fetch_or(format::kPrologueLogFailed |
                          (out_of_memory ? format::kPrologueOutOfMemory : 0),
                      std::memory_order_relaxed);
    }
}

void TraceFile::close() {
    if (map_) {
        munmap(map_, map_size_);
        map_ = nullptr;
    }
    if (fd_ >= 0) {
        ::close(fd_);
        fd_ = -1;
    }
}

} // namespace gmt::preload
