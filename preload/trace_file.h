// The trace file on disk: created exclusively (0600, O_EXCL|O_NOFOLLOW, a unique name on
// a clash), its prologue and ring mapped MAP_SHARED so that stores into them are in the
// page cache at once and survive the process being killed, and its log appended with
// pwrite, which is just as durable against a kill.
//
// Nothing here may kill the program: the blocks of the mapping are allocated before it is
// mapped (a store into a page the file system cannot back raises SIGBUS), and no write
// goes past the process's file size limit (which would raise SIGXFSZ). A write that fails
// fails cleanly, and leaves no partial frame behind.
#pragma once

#include <gpumemtrace/format/file_layout.h>
#include <gpumemtrace/format/ring_slot.h>

#include <cstdint>
#include <string>

namespace gmt::preload {

class TraceFile {
  public:
    TraceFile() = default;
    TraceFile(const TraceFile&) = delete;
    TraceFile& operator=(const TraceFile&) = delete;
    ~TraceFile();

    // Creates the file for `path` (or `path` with ".N" inserted before its extension when
    // that exists) with a ring of `ring_slots` slots, and, with a `checkpoint_region` size
    // (a multiple of format::kCheckpointAlign), an aggregated trace's two checkpoint
    // regions after it (format/aggregate.h). Returns false when no file could be created,
    // with the reason in `why`: the program then runs untraced.
    bool create(const std::string& path, uint32_t ring_slots, std::string& why,
                uint64_t checkpoint_region = 0);

    const std::string& path() const { return path_; }
    format::Prologue& prologue() { return *reinterpret_cast<format::Prologue*>(map_); }
    format::Slot* slots() { return reinterpret_cast<format::Slot*>(map_ + format::kPrologueSize); }
    uint32_t ringSlots() const { return ring_slots_; }

    // Appends bytes to the log, all or nothing. Async-signal-safe.
    bool append(const void* data, size_t size);
    // Writes a checkpoint (header and payload, at most checkpointRegion() bytes) at the
    // start of region `index` (0 or 1), all or nothing as far as a reader can tell (its
    // checksum). Async-signal-safe.
    bool writeCheckpoint(int index, const void* data, size_t size);
    uint64_t checkpointRegion() const { return checkpoint_region_; }
    // Sets kPrologueLogFailed in the mapped prologue, and kPrologueOutOfMemory when the
    // recorder stopped for want of host memory.
    void markLogFailed(bool out_of_memory);

    // Unmaps and closes; the file keeps what was written. A forked child calls it to let go
    // of its parent's trace.
    void close();

  private:
    int fd_ = -1;
    uint8_t* map_ = nullptr;
    size_t map_size_ = 0;
    uint32_t ring_slots_ = 0;
    uint64_t log_end_ = 0;
    uint64_t checkpoint_region_ = 0;
    std::string path_;
};

} // namespace gmt::preload
