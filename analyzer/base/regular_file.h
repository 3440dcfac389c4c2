// The one way the analyzer opens a file it reads (a trace, a JSON report, a suppressions
// file, a module named inside a trace): a regular file only, and without ever opening
// anything else, not even for a moment. A path inside a trace is the trace writer's
// choice: opening a device node can act on the device (a tape rewinds, a terminal becomes
// the controlling one), a FIFO would hang open(2) until a writer appeared, and
// /proc/self/mem is a "regular file" that reads this process's own memory. So the path is
// first resolved without opening what it names (O_PATH), its type checked, and only the
// very inode checked is then opened (through /proc/self/fd; where /proc is absent, the
// path again, non-blocking, with the identity compared).
// Header-only because both the analyzer and the separate symbolizer library use it.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <linux/magic.h>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace gmt::analyzer {

struct OpenedFile {
    int fd = -1; // owned by the caller
    uint64_t size = 0;
    dev_t device = 0; // identity, to check that a reopened path is still the same file
    ino_t inode = 0;
};

namespace regular_file_detail {

inline const char* notRegularWhy(mode_t mode) {
    return S_ISDIR(mode)    ? "not a regular file (a directory)"
           : S_ISFIFO(mode) ? "not a regular file (a FIFO)"
           : S_ISCHR(mode)  ? "not a regular file (a character device)"
           : S_ISBLK(mode)  ? "not a regular file (a block device)"
           : S_ISSOCK(mode) ? "not a regular file (a socket)"
                            : "not a regular file";
}

// Files of /proc and /sys are the kernel's views (a process's memory, device controls),
// never a trace, a report or a module, whatever their type says.
inline bool kernelView(int fd) {
    struct statfs fs {};
    return ::fstatfs(fd, &fs) == 0 && (fs.f_type == PROC_SUPER_MAGIC ||
                                       fs.f_type == static_cast<decltype(fs.f_type)>(SYSFS_MAGIC));
}

} // namespace regular_file_detail

// Opens `path` read-only if it is a regular file. On failure returns nullopt and sets
// `why` to the reason ("No such file or directory", "not a regular file (a FIFO)"), and
// `*not_regular` (when given) to whether the path exists but names something else.
// Symbolic links are followed (a module is often recorded by a link's name,
// libcuda.so.1); what they lead to is what is checked.
inline std::optional<OpenedFile> openRegularFile(const std::string& path, std::string& why,
                                                 bool* not_regular = nullptr) {
    using namespace regular_file_detail;
    if (not_regular) {
        *not_regular = false;
    }
    auto refuse = [&](const char* reason, int fd) -> std::optional<OpenedFile> {
        if (not_regular) {
            *not_regular = true;
        }
        why = reason;
        ::close(fd);
        return std::nullopt;
    };
    auto failed = [&](int fd) -> std::optional<OpenedFile> {
        why = std::strerror(errno);
        if (fd >= 0) {
            ::close(fd);
        }
        return std::nullopt;
    };
    // O_PATH resolves the name without opening the file: nothing of a device or FIFO runs.
    const int at = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (at < 0) {
        return failed(-1);
    }
    struct stat checked {};
    if (::fstat(at, &checked) != 0) {
        return failed(at);
    }
    if (!S_ISREG(checked.st_mode)) {
        return refuse(notRegularWhy(checked.st_mode), at);
    }
    if (kernelView(at)) {
        return refuse("not a regular file (a file of /proc or /sys)", at);
    }
    // Opening /proc/self/fd/N opens the inode `at` holds, whatever the path names now.
    const std::string self = "/proc/self/fd/" + std::to_string(at);
    int fd = ::open(self.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
        // No /proc here: the path again, non-blocking (a FIFO put in its place meanwhile
        // must not hang the open); the identity check below refuses whatever it is.
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    }
    ::close(at);
    if (fd < 0) {
        return failed(-1);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return failed(fd);
    }
    if (st.st_dev != checked.st_dev || st.st_ino != checked.st_ino || !S_ISREG(st.st_mode)) {
        return refuse("replaced while it was being opened", fd);
    }
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0 && (flags & O_NONBLOCK)) {
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
