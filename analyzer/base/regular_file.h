// The one way the analyzer opens a file it reads (a trace, a JSON report, a suppressions
// file, a module named inside a trace): a regular file only, and without ever blocking.
// A FIFO named on the command line or inside a trace would otherwise hang the run in
// open(2) until some writer appeared, and a directory would read as an empty file.
// Header-only because both the analyzer and the separate symbolizer library use it.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace gmt::analyzer {

struct OpenedFile {
    int fd = -1; // owned by the caller
    uint64_t size = 0;
    dev_t device = 0; // identity, to check that a reopened path is still the same file
    ino_t inode = 0;
};

// Opens `path` read-only if it is a regular file. On failure returns nullopt and sets
// `why` to the reason ("No such file or directory", "not a regular file (a FIFO)"), and
// `*not_regular` (when given) to whether the path exists but names something else.
inline std::optional<OpenedFile> openRegularFile(const std::string& path, std::string& why,
                                                 bool* not_regular = nullptr) {
    if (not_regular) {
        *not_regular = false;
    }
    // O_NONBLOCK makes open(2) of a FIFO return at once instead of waiting for a writer;
    // on a regular file it changes nothing, and it is cleared below anyway.
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        why = std::strerror(errno);
        return std::nullopt;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        why = std::strerror(errno);
        ::close(fd);
        return std::nullopt;
    }
    if (!S_ISREG(st.st_mode)) {
        if (not_regular) {
            *not_regular = true;
        }
        why = S_ISDIR(st.st_mode)    ? "not a regular file (a directory)"
              : S_ISFIFO(st.st_mode) ? "not a regular file (a FIFO)"
              : S_ISCHR(st.st_mode)  ? "not a regular file (a character device)"
              : S_ISBLK(st.st_mode)  ? "not a regular file (a block device)"
              : S_ISSOCK(st.st_mode) ? "not a regular file (a socket)"
                                     : "not a regular file";
        ::close(fd);
        return std::nullopt;
    }
    int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) {
        ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    }
    return OpenedFile{fd, static_cast<uint64_t>(st.st_size), st.st_dev, st.st_ino};
}

// The whole content of a regular file of at most `max_bytes`; nullopt with `why` set
// otherwise (a larger file is refused rather than read into memory).
inline std::optional<std::string> readRegularFile(const std::string& path, uint64_t max_bytes,
                                                  std::string& why) {
    std::optional<OpenedFile> f = openRegularFile(path, why);
    if (!f) {
        return std::nullopt;
    }
    if (f->size > max_bytes) {
        why = "larger than " + std::to_string(max_bytes) + " bytes";
        ::close(f->fd);
        return std::nullopt;
    }
    std::string out;
    char buffer[64 * 1024];
    for (;;) {
        ssize_t n = ::read(f->fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            why = std::strerror(errno);
            ::close(f->fd);
            return std::nullopt;
        }
        if (n == 0) {
            break;
        }
        // The file may grow while it is read; the bound holds regardless.
        if (out.size() + static_cast<size_t>(n) > max_bytes) {
            why = "larger than " + std::to_string(max_bytes) + " bytes";
            ::close(f->fd);
            return std::nullopt;
        }
        out.append(buffer, static_cast<size_t>(n));
    }
    ::close(f->fd);
    return out;
}

} // namespace gmt::analyzer
