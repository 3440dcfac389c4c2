#include "log_writer.h"

#include "logging.h"

#include <cstring>

namespace gmt::preload {

using format::ByteWriter;
using format::FrameHeader;
using format::RecordTag;

void LogWriter::addRecord(RecordTag tag, const uint8_t* body, size_t size) {
    ByteWriter w(frame_ + sizeof(FrameHeader) + payload_size_, kFrameCapacity - payload_size_);
    format::appendRecord(w, tag, body, size);
    payload_size_ += w.size();
    ++payload_records_;
}

bool LogWriter::flushFrame(uint64_t end_seq) {
    FrameHeader h{};
    h.magic = format::kFrameMagic;
    h.payload_size = static_cast<uint32_t>(payload_size_);
    h.record_count = payload_records_;
    h.end_seq = end_seq;
    h.checksum = format::frameChecksum(h, frame_ + sizeof(FrameHeader));
    std::memcpy(frame_, &h, sizeof h);
    bool ok = file_.append(frame_, sizeof h + payload_size_);
    if (!ok && !write_failed_) {
        // Loud, once: the events stay in the ring until overwritten, the trace is cut here.
        write_failed_ = true;
        logger().error("writing to {} failed; the trace ends here", file_.path());
    }
    payload_size_ = 0;
    payload_records_ = 0;
    return ok;
}

bool LogWriter::writeDirect(const uint8_t* records, size_t size, uint32_t count) {
    std::lock_guard lock(mutex_);
    if (size > kFrameCapacity) {
        return false;
    }
    std::memcpy(frame_ + sizeof(FrameHeader), records, size);
    payload_size_ = size;
    payload_records_ = count;
    return flushFrame(ring_.tail());
}

void LogWriter::flushThrough(uint64_t pos) {
    if (payload_size_ > 0) {
        flushFrame(pos);
    }
    ring_.setTail(pos);
}

uint64_t LogWriter::drainLocked() {
    if (finished_) {
        return 0;
    }
    uint64_t start = ring_.tail();
    uint64_t pos = start;
    uint8_t body[256];
    while (ring_.committed(pos)) {
        format::Slot& slot = ring_.at(pos);
        if (slot.type == format::SlotType::Event) {
            format::Event e;
            std::memcpy(&e, slot.payload, sizeof e);
            ByteWriter w(body, sizeof body);
            format::encodeEventBody(w, e, prev_);
            addRecord(RecordTag::Event, body, w.size());
            events_.fetch_add(1, std::memory_order_relaxed);
            ++pos;
        } else if (slot.type == format::SlotType::Blob) {
            // A blob is an already framed record split over consecutive slots.
            uint32_t length = slot.length;
            uint32_t parts = (length + format::kSlotPayload - 1) / format::kSlotPayload;
            if (length == 0 || length > kBlobCapacity) {
                ++pos; // cannot come from our producers; skip rather than stall forever
                continue;
            }
            bool complete = true;
            for (uint32_t i = 1; i < parts && complete; ++i) {
                complete = ring_.committed(pos + i);
            }
            if (!complete) {
                break;
            }
            for (uint32_t i = 0; i < parts; ++i) {
                uint32_t off = i * format::kSlotPayload;
                uint32_t n = std::min(format::kSlotPayload, length - off);
                std::memcpy(blob_ + off, ring_.at(pos + i).payload, n);
            }
            if (payload_size_ + length > kFrameCapacity) {
                flushThrough(pos);
            }
            std::memcpy(frame_ + sizeof(FrameHeader) + payload_size_, blob_, length);
            payload_size_ += length;
            ++payload_records_;
            pos += parts;
        } else {
            ++pos;
        }
        if (payload_size_ >= kFlushAt) {
            flushThrough(pos);
        }
    }
    flushThrough(pos);
    return pos - start;
}

uint64_t LogWriter::drain() {
    std::lock_guard lock(mutex_);
    return drainLocked();
}

bool LogWriter::tryDrain() {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) {
        return false;
    }
    drainLocked();
    return true;
}

void LogWriter::finish(const format::TrailerInfo& trailer, bool from_signal) {
    std::unique_lock lock(mutex_, std::defer_lock);
    if (from_signal) {
        if (!lock.try_lock()) {
            return; // the ring still holds everything; the reader recovers it
        }
    } else {
        lock.lock();
    }
    drainLocked();
    if (finished_) {
        return;
    }
    format::TrailerInfo t = trailer;
    t.events = events_.load(std::memory_order_relaxed);
    uint8_t body[64];
    ByteWriter w(body, sizeof body);
    format::encodeTrailer(w, t);
    addRecord(RecordTag::Trailer, body, w.size());
    flushFrame(ring_.tail());
    finished_ = true;
}

} // namespace gmt::preload
