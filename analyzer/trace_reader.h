// Streaming reader of one trace file: validates the prologue, then hands out the records
// of every valid log frame in order, then the records recovered from the ring. Memory is
// bounded by one frame (at most kMaxFramePayload) plus the ring index; nothing is sized
// from a file field without a bound.
#pragma once

#include "record.h"
#include "ring_recovery.h"
#include "trace_file.h"

#include <memory>
#include <optional>
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
    // Bytes read at once (more only for a larger frame): frames are ~56 KiB, so one read
    // brings many. A run over many traces passes less (see analyzeTraces).
    static constexpr size_t kDefaultReadAhead = 1u << 20;
    static constexpr size_t kMinReadAhead = 64u << 10;

    // Opens and validates the prologue. Throws TraceError (file, offset, reason) for an
    // empty, foreign, future-version or corrupt file.
    explicit TraceReader(std::string path, size_t read_ahead = kDefaultReadAhead);
    ~TraceReader();

    const std::string& path() const { return file_.path(); }
    const format::Prologue& prologue() const { return prologue_; }

    // The next record, or false at the end. A torn or corrupt log is not an error here:
    // status() says where and why it stopped.
    bool next(Record& out);

    // Final once next() has returned false.
    const ReadStatus& status() const { return status_; }

  private:
    bool loadFrame();
    const uint8_t* fetch(uint64_t offset, size_t n, size_t& got);
    void stop(uint64_t offset, std::string reason);
    void noteRecord(const Record& r);

    TraceFile file_;
    format::Prologue prologue_{};
    ReadStatus status_;

    enum class Phase { Log, Ring, Done } phase_ = Phase::Log;
    uint64_t pos_ = 0; // next frame's offset
    uint64_t frame_offset_ = 0;
    format::FrameHeader frame_{};
    // Read-ahead: file bytes [buf_offset_, buf_offset_ + buf_size_) in buf_, so that a
    // frame takes no read of its own. The current frame's payload points into it.
    size_t read_ahead_;
    std::vector<uint8_t> buf_;
    uint64_t buf_offset_ = 0;
    size_t buf_size_ = 0;
    const uint8_t* payload_ = nullptr;
    size_t payload_size_ = 0;
    std::optional<format::ByteReader> frame_reader_;
    uint32_t frame_records_ = 0;
    uint64_t end_seq_ = 0; // of the last valid frame
    format::EventCoder prev_{};
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
