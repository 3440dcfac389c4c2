// Positional reads from a trace file. pread instead of mmap: a trace being written (or
// truncated) underneath us must yield short reads, not SIGBUS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gmt::analyzer {

class TraceFile {
  public:
    // Throws TraceError when the file cannot be opened or is not a regular file.
    explicit TraceFile(std::string path);
    ~TraceFile();
    TraceFile(const TraceFile&) = delete;
    TraceFile& operator=(const TraceFile&) = delete;

    const std::string& path() const { return path_; }
    uint64_t size() const { return size_; }
    // Reads up to `n` bytes at `offset`; returns how many were read (short at EOF).
    // Throws TraceError on an I/O error.
    size_t read(uint64_t offset, void* buffer, size_t n) const;

  private:
    std::string path_;
    int fd_ = -1;
    uint64_t size_ = 0;
};

} // namespace gmt::analyzer
