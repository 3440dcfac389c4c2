// Moves committed ring slots into the log, in sequence order, as checksummed frames of
// delta-coded records (trace_format.h). Exactly one thread drains at a time (a mutex);
// a signal handler only ever tries the lock, so a crash inside a drain cannot deadlock.
//
// When the log cannot be written (full disk, quota, file size limit) the writer stops for
// good: it marks the prologue (format::kPrologueLogFailed, durable in the shared mapping),
// seals the ring so that every later call counts as dropped, and consumes nothing more,
// so the ring keeps the events the log could not take for the reader to recover. The same
// when an aggregated trace's tables cannot grow (out of host memory, aggregator.h), with
// format::kPrologueOutOfMemory: nothing on this thread may throw.
//
// Aggregated (GPUMEMTRACE_MODE=aggregate, format/aggregate.h): events and phases go to an
// Aggregator instead of the log, and the ring is freed only up to a checkpoint written into
// the file, so what was folded since the last one is still in the ring if the process dies.
#pragma once

#include "aggregator.h"
#include "phase_accounting.h"
#include "ring_buffer.h"
#include "trace_file.h"

#include <gpumemtrace/format/event_codec.h>
#include <gpumemtrace/format/file_layout.h>
#include <gpumemtrace/format/records.h>

#include <atomic>
#include <mutex>
#include <vector>

namespace gmt::preload {

class LogWriter {
  public:
    LogWriter(TraceFile& file, RingBuffer& ring) : file_(file), ring_(ring) {}

    // Adds a record straight to the log, in frames covering no ring slots: the header and
    // device records, written before any slot exists. A frame is written when the next
    // record would not fit it, and by flushDirect. False when the record cannot be written:
    // larger than a frame, or the log failed.
    bool writeDirect(format::RecordTag tag, const uint8_t* body, size_t size);
    bool flushDirect();

    // Drains every committed slot.
    void drain();
    // Signal-handler variant: drains only when nobody else is draining.
    bool tryDrain();
    // Drains everything below `end` (the ring's seal), waiting a bounded time for
    // positions still being filled, then appends the trailer. Positions that stay
    // unfilled (a call that has not returned on another thread, or the calling thread's
    // own open positions [own_first, own_end), interrupted by a signal) are skipped and
    // counted in the trailer (format::TrailerInfo::in_flight).
    void finish(format::TrailerInfo trailer, uint64_t end, uint64_t own_first, uint64_t own_end,
                bool from_signal);
    // Continues after a provisional finish (execve failed): positions below `next` were
    // never handed out.
    void reopen(uint64_t next);
    // The log could not be written: nothing more will be.
    bool failed() const { return failed_; }
    // Folds events into `aggregator` from now on, writing checkpoints into the file's
    // checkpoint regions (TraceFile::create with a region size). Before the first drain.
    void aggregate(Aggregator* aggregator) { aggregator_ = aggregator; }
    // Hands every drained Phase and Recording record, and the events while a phase is
    // accounted, to `accounting` (phase_accounting.h); null: to nothing (a signal handler's
    // drain must not allocate).
    void account(PhaseAccounting* accounting) {
        accounting_.store(accounting, std::memory_order_relaxed);
    }

  private:
    struct Ends {
        uint64_t limit;         // drain below this position
        uint64_t wait_until_ns; // 0: stop at the first position not filled yet
        uint64_t own_first, own_end;
    };
    void drainLocked(const Ends& ends);
    bool flushFrame(uint64_t end_seq);
    // Writes the pending records as a frame ending at `pos`, then frees the ring up to it.
    void flushThrough(uint64_t pos);
    // Aggregated: the checkpoint of everything folded below `end_seq`, into the region its
    // sequence number picks. False (and the writer stopped) when it could not be written.
    bool writeCheckpoint(uint64_t end_seq);
    // Frames the record into the pending frame; false (and nothing added) when it does not
    // fit there.
    bool addRecord(format::RecordTag tag, const uint8_t* body, size_t size);
    bool waitCommitted(uint64_t pos, uint64_t deadline_ns);
    // Stops for good: the log could not be written, or (`out_of_memory`) the aggregator
    // had no memory for its tables.
    void stop(bool out_of_memory);

    static constexpr size_t kFrameCapacity = 64 * 1024;
    static constexpr size_t kFlushAt = kFrameCapacity - 8 * 1024;
    static constexpr size_t kBlobCapacity = 16 * 1024;
    static_assert(kFrameCapacity - kFlushAt >= format::kMaxEventRecord);

    TraceFile& file_;
    RingBuffer& ring_;
    std::mutex mutex_;
    format::EventCoder prev_{};
    uint64_t events_ = 0;
    uint64_t unfinished_ = 0;
    Aggregator* aggregator_ = nullptr;
    std::atomic<PhaseAccounting*> accounting_{nullptr};
    uint64_t folded_ = 0;      // aggregated: positions below it are folded
    uint64_t checkpoints_ = 0; // aggregated: checkpoints written
    std::vector<uint8_t> checkpoint_;
    size_t payload_size_ = 0;
    uint32_t payload_records_ = 0;
    bool failed_ = false;
    bool finished_ = false;
    uint8_t frame_[sizeof(format::FrameHeader) + kFrameCapacity];
    uint8_t blob_[kBlobCapacity];
};

} // namespace gmt::preload
