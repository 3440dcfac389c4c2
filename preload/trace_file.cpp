#include "trace_file.h"

#include "logging.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
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

} // namespace

TraceFile::~TraceFile() {
    close();
}

bool TraceFile::create(const std::string& path, uint32_t ring_slots) {
    int fd = -1;
    std::string chosen;
    for (int n = 0; n < 1000 && fd < 0; ++n) {
        chosen = withSuffix(path, n);
        fd = ::open(chosen.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) {
            logger().error("cannot create trace file {}: {}; tracing is off", chosen,
                           std::strerror(errno));
            return false;
        }
    }
    if (fd < 0) {
        logger().error("cannot find a free name for trace file {}; tracing is off", path);
        return false;
    }
    if (chosen != path) {
        logger().warn("{} exists; writing the trace to {}", path, chosen);
    }
    size_t map_size = format::kPrologueSize + size_t{ring_slots} * format::kSlotSize;
    if (ftruncate(fd, static_cast<off_t>(map_size)) != 0) {
        logger().error("cannot size trace file {}: {}", chosen, std::strerror(errno));
        ::close(fd);
        ::unlink(chosen.c_str());
        return false;
    }
    void* map = mmap(nullptr, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        logger().error("cannot map trace file {}: {}", chosen, std::strerror(errno));
        ::close(fd);
        ::unlink(chosen.c_str());
        return false;
    }
    fd_ = fd;
    map_ = static_cast<uint8_t*>(map);
    map_size_ = map_size;
    ring_slots_ = ring_slots;
    log_end_ = map_size;
    path_ = chosen;

    format::Prologue& p = prologue();
    std::memcpy(p.magic, format::kMagic, sizeof p.magic);
    p.format_version = format::kFormatVersion;
    p.prologue_size = sizeof(format::Prologue);
    p.ring_offset = format::kPrologueSize;
    p.ring_slots = ring_slots;
    p.slot_size = format::kSlotSize;
    p.log_offset = map_size;
    p.dropped_events = 0;
    p.flags = 0;
    p.checksum = format::prologueChecksum(p);
    return true;
}

bool TraceFile::append(const void* data, size_t size) {
    auto* p = static_cast<const uint8_t*>(data);
    while (size > 0) {
        ssize_t n = ::pwrite(fd_, p, size, static_cast<off_t>(log_end_));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        p += n;
        size -= static_cast<size_t>(n);
        log_end_ += static_cast<uint64_t>(n);
    }
    return true;
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
