#include "read/trace_reader.h"

#include "read/record_decoder.h"
#include "read/trace_error.h"

#include <algorithm>
#include <span>

#include <gpumemtrace/format/byte_coding.h>
#include <gpumemtrace/format/file_layout.h>

namespace gmt::analyzer {

using format::Prologue;

namespace {
// Records of a large frame decoded at a time: bounds what streaming it holds.
constexpr size_t kLargeFrameRecords = 4096;
} // namespace

TraceReader::TraceReader(std::string path, size_t read_ahead, DecodePool& pool)
    : file_(std::move(path)), read_ahead_(std::max(read_ahead, kMinReadAhead)) {
    const std::string& name = file_.path();
    if (file_.size() == 0) {
        throw TraceError(name, 0, "empty file: not a gpumemtrace trace");
    }
    size_t got = file_.read(0, &prologue_, sizeof prologue_);
    if (got < sizeof prologue_.magic ||
        std::memcmp(prologue_.magic, format::kMagic, sizeof format::kMagic) != 0) {
        throw TraceError(name, 0, "not a gpumemtrace trace (bad magic)");
    }
    if (got < sizeof prologue_) {
        throw TraceError(name, got, "file ends inside the prologue");
    }
    if (prologue_.format_version > format::kFormatVersion) {
        throw TraceError(name, offsetof(Prologue, format_version),
                         "trace format version " + std::to_string(prologue_.format_version) +
                             " is newer than this gpumemtrace supports (" +
                             std::to_string(format::kFormatVersion) + "); upgrade gpumemtrace");
    }
    if (prologue_.format_version == 0) {
        throw TraceError(name, offsetof(Prologue, format_version), "invalid format version 0");
    }
    if (format::prologueChecksum(prologue_) != prologue_.checksum) {
        throw TraceError(name, offsetof(Prologue, checksum), "prologue checksum mismatch");
    }
    const uint32_t slots = prologue_.ring_slots;
    if (prologue_.prologue_size < format::kMinPrologueSize ||
        prologue_.prologue_size > format::kPrologueSize) {
        throw TraceError(name, offsetof(Prologue, prologue_size), "invalid prologue size");
    }
    if (prologue_.prologue_size < sizeof(Prologue)) {
        // Written before `control` existed: those bytes are not its.
        prologue_.control = format::kControlRecording;
        prologue_.reserved = 0;
    }
    if (prologue_.slot_size != format::kSlotSize || slots < format::kMinRingSlots ||
        slots > format::kMaxRingSlots || (slots & (slots - 1)) != 0) {
        throw TraceError(name, offsetof(Prologue, ring_slots),
                         "invalid ring geometry (" + std::to_string(slots) + " slots of " +
                             std::to_string(prologue_.slot_size) + " bytes)");
    }
    // An aggregated trace has its checkpoint regions between the ring and the log.
    const uint64_t checkpoints =
        (prologue_.flags & format::kPrologueAggregated) ? 2 * checkpointRegionSize(prologue_) : 0;
    if ((prologue_.flags & format::kPrologueAggregated) && checkpoints == 0) {
        throw TraceError(name, offsetof(Prologue, log_offset),
                         "invalid checkpoint regions of an aggregated trace");
    }
    if (prologue_.ring_offset < format::kPrologueSize ||
        prologue_.log_offset !=
            prologue_.ring_offset + uint64_t{slots} * format::kSlotSize + checkpoints) {
        throw TraceError(name, offsetof(Prologue, ring_offset), "invalid ring or log offset");
    }
    if (prologue_.log_offset > file_.size()) {
        throw TraceError(name, file_.size(),
                         "file ends inside the ring (log expected at offset " +
                             std::to_string(prologue_.log_offset) + ")");
    }
    status_.log_end_offset = prologue_.log_offset;
    log_ = pool.open(file_, prologue_.log_offset, read_ahead_);
}

TraceReader::~TraceReader() = default;

inline void TraceReader::noteRecord(const Record& r) {
    last_was_trailer_ = r.tag == format::RecordTag::Trailer;
    if (r.tag == format::RecordTag::Event) {
        ++status_.events;
    } else if (r.tag == format::RecordTag::Trailer) {
        status_.trailer_seen = true;
        trailer_ = r.trailer;
    }
    if (r.from_ring) {
        ++status_.ring_records;
    }
}

void TraceReader::setNextStop() {
    next_stop_ = next_other_ < batch_->others.size() ? batch_->others[next_other_].events_before
                                                     : batch_->event_count;
}

bool TraceReader::takeBatch() {
    batch_ = log_->next();
    if (!batch_) {
        return false; // only after a batch with an end, which ends the log first
    }
    next_event_ = 0;
    next_other_ = 0;
    if (batch_->large) {
        // Decoded here, a bounded number of records at a time, from the state the frames
        // before it left.
        batch_->coder = prev_;
        batch_->based = true;
        large_ = {};
        large_more_ = decodeFrameRecords(*batch_, large_, kLargeFrameRecords);
        status_.skipped_records += batch_->skipped_records;
    }
    setNextStop();
    return true;
}

// The batch is handed out: what it tells about the log.
void TraceReader::finishBatch() {
    if (!batch_->large) {
        status_.skipped_records += batch_->skipped_records;
    }
    end_seq_ = std::max(end_seq_, batch_->end_seq);
    prev_ = batch_->coder;
    if (batch_->large) {
        log_->streamed(prev_);
    }
    if (batch_->end) {
        status_.log_end_offset = batch_->end->offset;
        if (batch_->end->damaged) {
            status_.stopped_early = true;
            status_.stop_reason = batch_->end->reason;
        }
    }
}

bool TraceReader::nextFromLog(Record& out) {
    for (;;) {
        if (!batch_) {
            if (!takeBatch()) {
                return false;
            }
        }
        if (next_event_ < next_stop_) {
            out.tag = format::RecordTag::Event;
            out.event = batch_->events[next_event_++];
            return true;
        }
        if (next_other_ < batch_->others.size()) {
            // Decoded again from the batch's bytes: the decode that made the batch
            // found it well-formed, so it is again.
            const OtherRecord& o = batch_->others[next_other_++];
            setNextStop();
            format::ByteReader r(std::span<const uint8_t>(batch_->input.data() + o.input_pos,
                                                          batch_->bytes - o.input_pos));
            format::EventCoder unused{}; // not an event: the delta state is not touched
            if (decodeRecord(r, out, unused) == DecodeStatus::Ok) {
                return true;
            }
            continue;
        }
        if (large_more_) {
            large_more_ = decodeFrameRecords(*batch_, large_, kLargeFrameRecords);
            status_.skipped_records += batch_->skipped_records;
            next_event_ = 0;
            next_other_ = 0;
            setNextStop();
            continue;
        }
        finishBatch();
        const bool last = batch_->end.has_value();
        batch_ = nullptr;
        next_event_ = next_stop_ = 0;
        if (last) {
            return false;
        }
    }
}

bool TraceReader::nextSlow(Record& out) {
    if (phase_ == Phase::Log) {
        out.from_ring = false;
        out.missing_before = 0;
        if (nextFromLog(out)) {
            noteRecord(out);
            return true;
        }
        log_.reset();
        if (prologue_.flags & format::kPrologueAggregated) {
            // The log held the definitions; the events are in the newest checkpoint, and
            // in the ring from where it ends.
            checkpoint_ = std::make_unique<CheckpointReader>(file_, prologue_);
            end_seq_ = checkpoint_->endSeq();
            phase_ = Phase::Checkpoint;
        } else {
            // Everything the valid frames cover is out; the ring has the rest.
            ring_ = std::make_unique<RingRecovery>(file_, prologue_, end_seq_);
            phase_ = Phase::Ring;
        }
    }
    if (phase_ == Phase::Checkpoint) {
        if (checkpoint_->next(out)) {
            noteRecord(out);
            return true;
        }
        status_.skipped_records += checkpoint_->skipped();
        checkpoint_.reset();
        ring_ = std::make_unique<RingRecovery>(file_, prologue_, end_seq_);
        phase_ = Phase::Ring;
    }
    if (phase_ == Phase::Ring) {
        if (ring_->next(out, prev_)) {
            noteRecord(out);
            return true;
        }
        status_.skipped_records += ring_->skippedSlots();
        status_.covered_positions = end_seq_;
        status_.missing_positions = ring_->missingPositions();
        status_.unknown_tail = status_.stopped_early && status_.ring_records == 0;
        ring_.reset();
        phase_ = Phase::Done;
        // Other traces may still be read for a long time: give back what this one held.
        file_.close();
        status_.dropped_events = std::max(trailer_.dropped_events, prologue_.dropped_events);
        status_.in_flight = trailer_.in_flight;
        status_.log_failed = (prologue_.flags & format::kPrologueLogFailed) != 0;
        status_.out_of_memory =
            status_.log_failed && (prologue_.flags & format::kPrologueOutOfMemory) != 0;
        status_.complete = status_.trailer_seen && last_was_trailer_ && !status_.stopped_early;
    }
    return false;
}

std::string ReadStatus::incompleteReason() const {
    if (complete) {
        return {};
    }
    std::string reason;
    if (log_failed) {
        // The recorder stopped itself: what the log lacks came from the ring, and every
        // later call is in dropped_events.
        reason = out_of_memory
                     ? "the recorder ran out of host memory for the aggregated trace and "
                       "stopped tracing"
                     : "the recorder could not write the trace (file system full, quota or "
                       "file size limit) and stopped tracing";
        if (stopped_early) {
            reason += "; " + stop_reason;
        }
    } else if (stopped_early) {
        reason = stop_reason;
    } else {
        reason = trailer_seen ? "records follow the trailer"
                              : "no trailer: the process did not exit cleanly";
    }
    return reason;
}

} // namespace gmt::analyzer
