#include "cli/output_file.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <unistd.h>

namespace gmt::cli {

namespace {

[[noreturn]] void writeFailed(const std::string& name, int err) {
    throw OutputError("cannot write " + name +
                      (err ? std::string(": ") + std::strerror(err) : std::string()));
}

// write(2) until done; returns 0 or the errno of the failure.
int writeAll(int fd, std::string_view text) {
    size_t done = 0;
    while (done < text.size()) {
        ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return n < 0 ? errno : ENOSPC;
        }
        done += static_cast<size_t>(n);
    }
    return 0;
}

} // namespace

void checkStdout() {
    if (!std::cout) {
        // The stream keeps no errno; the failed write(2) just left it.
        writeFailed("standard output", errno);
    }
}

void finishStream(std::ostream& stream, const std::string& name) {
    if (!stream) {
        writeFailed(name, errno);
    }
    errno = 0;
    stream.flush();
    if (!stream) {
        writeFailed(name, errno);
    }
}

void finishStdout() {
    finishStream(std::cout, "standard output");
}

void writeStdout(std::string_view text) {
    finishStdout();
    if (int err = writeAll(STDOUT_FILENO, text)) {
        writeFailed("standard output", err);
    }
}

void writeOutputFile(const std::string& path, std::string_view text) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0) {
        throw OutputError("cannot write " + path + ": " + std::strerror(errno));
    }
    if (int err = writeAll(fd, text)) {
        ::close(fd);
        throw OutputError("cannot write " + path + ": " + std::strerror(err));
    }
    // A network file system may report a failed write only here.
    if (::close(fd) != 0) {
        throw OutputError("cannot write " + path + ": " + std::strerror(errno));
    }
}

} // namespace gmt::cli
