// Streaming reader of one trace file: validates the prologue, then hands out the records
// of every valid log frame in order, then the records recovered from the ring. The log is
// decoded ahead, in batches of frames, by a DecodePool's threads while the records
// already decoded are handed out. Memory is bounded by the batches in flight (the pool's
// budget) plus the ring index; nothing is sized from a file field without a bound.
#pragma once

#include "read/checkpoint_reader.h"
#include "read/decode_pool.h"
#include "read/record.h"
#include "read/ring_recovery.h"
#include "read/trace_file.h"

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gmt::analyzer {

struct ReadStatus {
    bool complete = false; // a trailer was the last record and the log ended cleanly
    bool trailer_seen = false;
    uint64_t events = 0;          // event records handed out (log + ring)
    uint64_t dropped_events = 0;  // max(trailer's, prologue's)
    uint64_t ring_records = 0;    // records recovered from the ring
    uint64_t skipped_records = 0; // unknown tags and unrecoverable ring slots
    uint64_t log_end_offset = 0;  // where the valid log ends
    bool stopped_early = false;   // the log ended in a torn or corrupt frame
    std::string stop_reason;      // why, when stopped_early
    bool log_failed = false;      // the recorder could not write its log (prologue flag)
    bool out_of_memory = false;   // with log_failed: it stopped for want of host memory
    uint64_t in_flight = 0;       // calls not returned when the trace ended (last trailer's)
    // Events known to be missing. Positions: the sequence positions (one per event, a few
    // per other record) between the valid log's end and what the ring still held, or
    // between ring slots, that nothing in the file holds.
    uint64_t covered_positions = 0; // end_seq of the last valid frame
    uint64_t missing_positions = 0;
    // The log ends in damage and nothing after it survived in the ring: events after the
    // valid part may be missing, how many is unknown.
    bool unknown_tail = false;

    // Why the trace is not complete, in words ("" when it is).
    std::string incompleteReason() const;
};

class TraceReader {
  public:
    // Bytes of log read and decoded at once (a larger frame is read whole): frames are
    // ~56 KiB, so a batch holds a few. A run over many traces passes less (see
    // analyzeTraces).
    static constexpr size_t kDefaultReadAhead = 128u << 10;
    static constexpr size_t kMinReadAhead = 64u << 10;

    // Opens and validates the prologue. Throws TraceError (file, offset, reason) for an
    // empty, foreign, future-version or corrupt file. The log is decoded ahead by `pool`.
    explicit TraceReader(std::string path, size_t read_ahead = kDefaultReadAhead,
                         DecodePool& pool = DecodePool::shared());
    ~TraceReader();

    const std::string& path() const { return file_.path(); }
    const format::Prologue& prologue() const { return prologue_; }

    // The next record, or false at the end. A torn or corrupt log is not an error here:
    // status() says where and why it stopped. Throws TraceError on an I/O error.
    bool next(Record& out) {
        // The common case inline: the next event of the batch being handed out.
        if (next_event_ < next_stop_) [[likely]] {
            out.tag = format::RecordTag::Event;
            out.from_ring = false;
            out.missing_before = 0;
            out.event = batch_->events[next_event_++];
            ++status_.events;
            last_was_trailer_ = false;
            return true;
        }
        return nextSlow(out);
    }

    // The events of the batch being handed out that come before its next other record, in
    // place (valid until the next call of next() or takeEvents()), none of them taken yet:
    // the events next() would give next, each with nothing missing before it; empty when
    // the next record is anything else (call next()). For a reader whose events go nowhere
    // but to the analysis: a run of them is applied where it lies, without copying each into
    // a Record or counting it on its own.
    std::span<const format::Event> pendingEvents() const {
        return {batch_ ? batch_->events.get() + next_event_ : nullptr, next_stop_ - next_event_};
    }
    // Takes the first `n` of pendingEvents() (at most all of them), as `n` calls of next()
    // would have.
    void takeEvents(size_t n) {
        next_event_ += n;
        status_.events += n;
        last_was_trailer_ = last_was_trailer_ && n == 0;
    }

    // Final once next() has returned false.
    const ReadStatus& status() const { return status_; }

  private:
    bool nextSlow(Record& out);
    bool nextFromLog(Record& out);
    // Takes the next batch of the log; false when the log is done.
    bool takeBatch();
    void finishBatch();
    void setNextStop();
    void noteRecord(const Record& r);

    TraceFile file_;
    format::Prologue prologue_{};
    ReadStatus status_;

    enum class Phase { Log, Checkpoint, Ring, Done } phase_ = Phase::Log;
    size_t read_ahead_;
    std::unique_ptr<DecodePool::Stream> log_;
    FrameBatch* batch_ = nullptr; // the batch being handed out
    size_t next_event_ = 0;
    size_t next_other_ = 0;
    size_t next_stop_ = 0; // events before the next other record (or the batch's end)
    FrameCursor large_;    // streaming a large frame
    bool large_more_ = false;
    uint64_t end_seq_ = 0; // of the last valid frame
    format::EventCoder prev_{};
    std::unique_ptr<CheckpointReader> checkpoint_; // an aggregated trace's
    std::unique_ptr<RingRecovery> ring_;
    bool last_was_trailer_ = false;
    format::TrailerInfo trailer_{};
};

// Reads a whole trace, calling `visit(const Record&)` for each record. Convenience for
// tools that need no look-ahead.
template <typename Visitor> ReadStatus readTrace(const std::string& path, Visitor&& visit) {
    TraceReader reader(path);
    auto record = std::make_unique<Record>();
    while (reader.next(*record)) {
        visit(*record);
    }
    return reader.status();
}

} // namespace gmt::analyzer
