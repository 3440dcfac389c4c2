#include "trace_reader.h"

#include "record_decoder.h"
#include "trace_error.h"

#include <algorithm>

namespace gmt::analyzer {

using format::FrameHeader;
using format::Prologue;

namespace {

std::string tagName(format::RecordTag tag) {
    switch (tag) {
    case format::RecordTag::Header:
        return "header";
    case format::RecordTag::Device:
        return "device";
    case format::RecordTag::Module:
        return "module";
    case format::RecordTag::Stack:
        return "stack";
    case format::RecordTag::Event:
        return "event";
    case format::RecordTag::Trailer:
        return "trailer";
    case format::RecordTag::Phase:
        return "phase";
    case format::RecordTag::PythonCode:
        return "python_code";
    case format::RecordTag::CachingAllocator:
        return "caching_allocator";
    }
    return "unknown";
}

bool allZero(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    return std::all_of(b, b + n, [](uint8_t x) { return x == 0; });
}

} // namespace

TraceReader::TraceReader(std::string path, size_t read_ahead)
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
    if (prologue_.prologue_size < sizeof(Prologue) ||
        prologue_.prologue_size > format::kPrologueSize) {
        throw TraceError(name, offsetof(Prologue, prologue_size), "invalid prologue size");
    }
    if (prologue_.slot_size != format::kSlotSize || slots < format::kMinRingSlots ||
        slots > format::kMaxRingSlots || (slots & (slots - 1)) != 0) {
        throw TraceError(name, offsetof(Prologue, ring_slots),
                         "invalid ring geometry (" + std::to_string(slots) + " slots of " +
                             std::to_string(prologue_.slot_size) + " bytes)");
    }
    if (prologue_.ring_offset < format::kPrologueSize ||
        prologue_.log_offset != prologue_.ring_offset + uint64_t{slots} * format::kSlotSize) {
        throw TraceError(name, offsetof(Prologue, ring_offset), "invalid ring or log offset");
    }
    if (prologue_.log_offset > file_.size()) {
        throw TraceError(name, file_.size(),
                         "file ends inside the ring (log expected at offset " +
                             std::to_string(prologue_.log_offset) + ")");
    }
    pos_ = prologue_.log_offset;
    status_.log_end_offset = pos_;
}

TraceReader::~TraceReader() = default;

void TraceReader::stop(uint64_t offset, std::string reason) {
    status_.stopped_early = true;
    status_.log_end_offset = offset;
    status_.stop_reason = std::move(reason);
    frame_reader_.reset();
}

// Points at `n` bytes of the file at `offset` (`got` of them, fewer only at the end of
// the file), reading ahead in large chunks.
const uint8_t* TraceReader::fetch(uint64_t offset, size_t n, size_t& got) {
    if (offset >= buf_offset_ && offset + n <= buf_offset_ + buf_size_) {
        got = n;
        return buf_.data() + (offset - buf_offset_);
    }
    // No more than the file holds: a small trace needs no full read-ahead buffer.
    const uint64_t left = offset < file_.size() ? file_.size() - offset : 0;
    const size_t want = std::max<size_t>(n, std::min<uint64_t>(read_ahead_, left));
    if (buf_.size() < want || buf_.size() > std::max(want, read_ahead_)) {
        // Grown for a large frame: back to the read-ahead size once frames are small.
        std::vector<uint8_t>(want).swap(buf_);
    }
    buf_offset_ = offset;
    buf_size_ = file_.read(offset, buf_.data(), want);
    got = std::min(n, buf_size_);
    return buf_.data();
}

// Loads the frame at pos_. False when the log ends here (cleanly or not).
bool TraceReader::loadFrame() {
    const uint64_t size = file_.size();
    status_.log_end_offset = pos_;
    if (pos_ >= size) {
        return false;
    }
    FrameHeader h{};
    size_t got = 0;
    const uint8_t* head = fetch(pos_, sizeof h, got);
    std::memcpy(&h, head, got);
    if (got < sizeof h) {
        if (!allZero(&h, got)) {
            stop(pos_, "torn frame header (file ends after " + std::to_string(got) + " bytes)");
        }
        return false;
    }
    if (h.magic != format::kFrameMagic) {
        // The recorder grows the file ahead of the log: zeros are where it stopped.
        if (!allZero(&h, sizeof h)) {
            stop(pos_, "bad frame magic");
        }
        return false;
    }
    if (h.payload_size > format::kMaxFramePayload) {
        stop(pos_, "frame payload size " + std::to_string(h.payload_size) + " exceeds the limit");
        return false;
    }
    if (h.payload_size > size - pos_ - sizeof h) {
        stop(pos_, "torn frame (" + std::to_string(h.payload_size) +
                       " payload bytes announced, file ends first)");
        return false;
    }
    const uint8_t* payload = fetch(pos_ + sizeof h, h.payload_size, got);
    if (got != h.payload_size) {
        stop(pos_, "torn frame (short read)");
        return false;
    }
    if (format::frameChecksum(h, payload) != h.checksum) {
        stop(pos_, "frame checksum mismatch");
        return false;
    }
    frame_ = h;
    frame_offset_ = pos_;
    frame_records_ = 0;
    payload_ = payload;
    payload_size_ = h.payload_size;
    frame_reader_.emplace(std::span<const uint8_t>(payload_, payload_size_));
    pos_ += sizeof h + h.payload_size;
    return true;
}

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

bool TraceReader::next(Record& out) {
    while (phase_ == Phase::Log) {
        if (!frame_reader_) {
            if (!loadFrame()) {
                // Everything the valid frames cover is out; the ring has the rest.
                status_.log_end_offset = status_.stopped_early ? status_.log_end_offset : pos_;
                ring_ = std::make_unique<RingRecovery>(file_, prologue_, end_seq_);
                phase_ = Phase::Ring;
                break;
            }
        }
        format::ByteReader& r = *frame_reader_;
        if (r.atEnd()) {
            if (frame_records_ != frame_.record_count) {
                stop(frame_offset_, "frame holds " + std::to_string(frame_records_) +
                                        " records but announces " +
                                        std::to_string(frame_.record_count));
                continue;
            }
            end_seq_ = std::max(end_seq_, frame_.end_seq);
            frame_reader_.reset();
            continue;
        }
        uint64_t record_offset =
            frame_offset_ + sizeof(FrameHeader) + (payload_size_ - r.remaining());
        out.from_ring = false;
        out.missing_before = 0;
        DecodeStatus s = decodeRecord(r, out, prev_);
        ++frame_records_;
        if (s == DecodeStatus::Malformed) {
            auto tag = static_cast<format::RecordTag>(
                payload_[record_offset - frame_offset_ - sizeof(FrameHeader)]);
            stop(record_offset, "malformed " + tagName(tag) + " record (frame checksum valid)");
            continue;
        }
        if (s == DecodeStatus::Skipped) {
            ++status_.skipped_records;
            continue;
        }
        noteRecord(out);
        return true;
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
        std::vector<uint8_t>().swap(buf_);
        buf_size_ = 0;
        file_.close();
        status_.dropped_events = std::max(trailer_.dropped_events, prologue_.dropped_events);
        status_.in_flight = trailer_.in_flight;
        status_.log_failed = (prologue_.flags & format::kPrologueLogFailed) != 0;
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
        reason = "the recorder could not write the trace (file system full, quota or file size "
                 "limit) and stopped tracing";
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
