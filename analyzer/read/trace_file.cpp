#include "read/trace_file.h"

#include "base/regular_file.h"
#include "read/trace_error.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace gmt::analyzer {

TraceFile::TraceFile(std::string path, DescriptorPool& pool) : path_(std::move(path)), pool_(pool) {
    std::string why;
    std::optional<OpenedFile> f = openRegularFile(path_, why);
    if (!f) {
        throw TraceError(path_, 0, "cannot open: " + why);
    }
    size_ = f->size;
    device_ = f->device;
    inode_ = f->inode;
    pool_.adopt(member_, f->fd);
}

TraceFile::~TraceFile() {
    pool_.forget(member_);
}

void TraceFile::close() const {
    pool_.forget(member_);
}

int TraceFile::reopen(uint64_t offset) const {
    std::string why;
    std::optional<OpenedFile> f = openRegularFile(path_, why);
    if (!f) {
        throw TraceError(path_, offset, "cannot reopen: " + why);
    }
    if (f->device != device_ || f->inode != inode_) {
        ::close(f->fd);
        throw TraceError(path_, offset, "the file was replaced while it was being read");
    }
    return f->fd;
}

size_t TraceFile::read(uint64_t offset, void* buffer, size_t n) const {
    const int fd = pool_.acquire(member_, [&] { return reopen(offset); });
    struct Pin {
        DescriptorPool& pool;
        DescriptorPool::Member& member;
        ~Pin() { pool.release(member); }
    } pin{pool_, member_};
    size_t done = 0;
    auto* out = static_cast<char*>(buffer);
    while (done < n) {
        ssize_t got = ::pread(fd, out + done, n - done, static_cast<off_t>(offset + done));
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            throw TraceError(path_, offset + done,
                             std::string("read error: ") + std::strerror(errno));
        }
        if (got == 0) {
            break;
        }
        done += static_cast<size_t>(got);
    }
    return done;
}

} // namespace gmt::analyzer
