#include "base/output_file.h"

#include "base/text_safety.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace gmt::analyzer {

namespace {

[[noreturn]] void fail(const std::string& what, const std::string& name, int error) {
    throw OutputError(what + " " + printable(name) +
                      (error ? std::string(": ") + std::strerror(error) : std::string()));
}

constexpr const char* kStdout = "standard output";

} // namespace

OutputFile::OutputFile(const std::string& path) : name_(path) {
    if (path.empty()) {
        // Never "no output": an empty name is a script's unset variable.
        throw OutputError("an empty file name is not an output");
    }
    if (path == "-") {
        finishStdout(); // what std::cout holds comes first
        fd_ = STDOUT_FILENO;
        name_ = kStdout;
        return;
    }
    // 0600: what is written names the program, its arguments and its paths, as the trace
    // does (a file that exists keeps its mode: its owner chose it). O_NONBLOCK: opening a
    // FIFO that no process reads fails at once (ENXIO) instead of waiting for a reader
    // forever; on anything else it changes nothing and is cleared below.
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY | O_NONBLOCK,
                 0600);
    if (fd_ < 0) {
        const int error = errno;
        struct stat st {};
        if (error == ENXIO && ::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode)) {
            throw OutputError("cannot write " + printable(path) +
                              ": a FIFO that no process is reading");
        }
        fail("cannot create", path, error);
    }
    owned_ = true;
    struct stat st {};
    if (::fstat(fd_, &st) != 0) {
        fail("cannot create", path, errno);
    }
    if (S_ISBLK(st.st_mode)) {
        // A typo away from overwriting a disk: nothing is written there.
        throw OutputError("cannot write " + printable(path) +
                          ": a block device, not a file (refused)");
    }
    // A FIFO with a reader (`--junit >(xmllint ...)`) or a device such as /dev/full is
    // written as any stream, blocking while a pipe is full as a pipe does.
    const int flags = ::fcntl(fd_, F_GETFL);
    if (flags < 0 || ::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        fail("cannot write", path, errno);
    }
}

OutputFile OutputFile::scratch(const std::string& directory) {
    OutputFile f;
    f.name_ = "a scratch file in " + directory;
    // O_TMPFILE: no name ever exists, so nothing is left behind by a crash. Not every file
    // system has it; a named file removed at once is the same for everyone else.
    f.fd_ = ::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (f.fd_ < 0) {
        std::string name = directory + "/.gpumemtrace-export.XXXXXX";
        f.fd_ = ::mkostemp(name.data(), O_CLOEXEC);
        if (f.fd_ < 0) {
            fail("cannot create", f.name_, errno);
        }
        ::unlink(name.c_str());
    }
    f.owned_ = true;
    return f;
}

OutputFile::OutputFile(OutputFile&& other) noexcept
    : fd_(other.fd_), owned_(other.owned_), name_(std::move(other.name_)),
      buffer_(std::move(other.buffer_)), used_(other.used_), written_(other.written_) {
    other.fd_ = -1;
    other.owned_ = false;
}

OutputFile::~OutputFile() {
    if (owned_ && fd_ >= 0) {
        ::close(fd_);
    }
}

void OutputFile::writeAll(std::string_view bytes) {
    while (!bytes.empty()) {
        const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            // A write of nothing would repeat forever; it means there is no room.
            fail("cannot write", name_, n < 0 ? errno : ENOSPC);
        }
        bytes.remove_prefix(static_cast<size_t>(n));
        written_ += static_cast<uint64_t>(n);
    }
}

void OutputFile::flushBuffer() {
    if (used_ > 0) {
        writeAll(std::string_view(buffer_.get(), used_));
        used_ = 0;
    }
}

void OutputFile::close() {
    flushBuffer();
    if (owned_ && fd_ >= 0) {
        const int fd = fd_;
        fd_ = -1;
        if (::close(fd) != 0) {
            fail("cannot write", name_, errno);
        }
    }
}

void OutputFile::append(OutputFile& scratch) {
    scratch.flushBuffer();
    flushBuffer();
    std::string chunk(kBufferSize, '\0');
    for (off_t at = 0;;) {
        const ssize_t n = ::pread(scratch.fd_, chunk.data(), chunk.size(), at);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            fail("cannot read back", scratch.name_, errno);
        }
        if (n == 0) {
            break;
        }
        writeAll(std::string_view(chunk.data(), static_cast<size_t>(n)));
        at += n;
    }
    scratch.close();
}

void writeOutputFile(const std::string& path, std::string_view text) {
    OutputFile out(path);
    out.write(text);
    out.close();
}

void checkStdout() {
    if (!std::cout) {
        // The stream keeps no errno; the failed write(2) just left it.
        fail("cannot write", kStdout, errno);
    }
}

void finishStream(std::ostream& stream, const std::string& name) {
    if (!stream) {
        fail("cannot write", name, errno);
    }
    errno = 0;
    stream.flush();
    if (!stream) {
        fail("cannot write", name, errno);
    }
}

void finishStdout() {
    finishStream(std::cout, kStdout);
    // What went through C stdio instead (CLI11's help goes through std::cout, which shares
    // stdio's buffer; a library may print directly).
    errno = 0;
    if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        fail("cannot write", kStdout, errno);
    }
}

void makeDirectory(const std::string& path) {
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (!std::filesystem::is_directory(path)) {
        throw OutputError("cannot create the directory " + printable(path) +
                          (ec ? ": " + ec.message() : ": a file of that name exists"));
    }
}

std::string directoryOf(const std::string& path) {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    return parent.empty() ? "." : parent.string();
}

} // namespace gmt::analyzer
