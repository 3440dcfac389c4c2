// Moves committed ring slots into the log, in sequence order, as checksummed frames of
// delta-coded records (trace_format.h). Exactly one thread drains at a time (a mutex);
// a signal handler only ever tries the lock, so a crash inside a drain cannot deadlock.
#pragma once

#include "ring_buffer.h"
#include "trace_file.h"

#include <gpumemtrace/trace_format.h>

#include <atomic>
#include <mutex>

namespace gmt::preload {

class LogWriter {
  public:
    LogWriter(TraceFile& file, RingBuffer& ring) : file_(file), ring_(ring) {}

    // Writes records straight into the log as one frame covering no ring slots: the
    // header and device records, written before any slot exists.
    bool writeDirect(const uint8_t* records, size_t size, uint32_t count);

    // Drains every committed slot. Returns the number of slots consumed.
    uint64_t drain();
    // Signal-handler variant: drains only when nobody else is draining.
    bool tryDrain();
    // Drains, then appends the trailer. Later slots are not written.
    void finish(const format::TrailerInfo& trailer, bool from_signal);

  private:
    uint64_t drainLocked();
    bool flushFrame(uint64_t end_seq);
    // Writes the pending records as a frame ending at `pos`, then frees the ring up to it.
    void flushThrough(uint64_t pos);
    void addRecord(format::RecordTag tag, const uint8_t* body, size_t size);

    static constexpr size_t kFrameCapacity = 64 * 1024;
    static constexpr size_t kFlushAt = kFrameCapacity - 8 * 1024;
    static constexpr size_t kBlobCapacity = 16 * 1024;

    TraceFile& file_;
    RingBuffer& ring_;
    std::mutex mutex_;
    format::EventCoder prev_{};
    std::atomic<uint64_t> events_{0};
    size_t payload_size_ = 0;
    uint32_t payload_records_ = 0;
    bool write_failed_ = false;
    bool finished_ = false;
    uint8_t frame_[sizeof(format::FrameHeader) + kFrameCapacity];
    uint8_t blob_[kBlobCapacity];
};

} // namespace gmt::preload
