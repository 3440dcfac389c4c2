#include "trace_file.h"

#include "trace_error.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gmt::analyzer {

TraceFile::TraceFile(std::string path) : path_(std::move(path)) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
        throw TraceError(path_, 0, std::string("cannot open: ") + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd_);
        fd_ = -1;
        throw TraceError(path_, 0, "not a regular file");
    }
    size_ = static_cast<uint64_t>(st.st_size);
}

TraceFile::~TraceFile() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

size_t TraceFile::read(uint64_t offset, void* buffer, size_t n) const {
    size_t done = 0;
    auto* out = static_cast<char*>(buffer);
    while (done < n) {
        ssize_t got = ::pread(fd_, out + done, n - done, static_cast<off_t>(offset + done));
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
