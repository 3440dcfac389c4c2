// Positional reads from a trace file. pread instead of mmap: a trace being written (or
// truncated) underneath us must yield short reads, not SIGBUS. The descriptor comes from
// the shared DescriptorPool, so that a report over thousands of traces does not hold one
// per trace for the whole run.
#pragma once

#include "read/descriptor_pool.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/types.h>

namespace gmt::analyzer {

class TraceFile {
  public:
    // Throws TraceError when the file cannot be opened or is not a regular file (a FIFO
    // is refused without blocking).
    explicit TraceFile(std::string path, DescriptorPool& pool = DescriptorPool::shared());
    ~TraceFile();
    TraceFile(const TraceFile&) = delete;
    TraceFile& operator=(const TraceFile&) = delete;

    const std::string& path() const { return path_; }
    uint64_t size() const { return size_; }
    // Reads up to `n` bytes at `offset`; returns how many were read (short at EOF).
    // Throws TraceError on an I/O error, or when the file had to be reopened and the
    // path no longer names the same file.
    size_t read(uint64_t offset, void* buffer, size_t n) const;
    // Gives the descriptor back now (it is reopened if read again): for a trace read to
    // its end while others are still being read.
    void close() const;

  private:
    int reopen(uint64_t offset) const;

    std::string path_;
    uint64_t size_ = 0;
    dev_t device_ = 0;
    ino_t inode_ = 0;
    DescriptorPool& pool_;
    mutable DescriptorPool::Member member_;
};

} // namespace gmt::analyzer
