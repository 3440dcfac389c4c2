#include "log_writer.h"

#include "clock.h"
#include "logging.h"
#include "printable.h"

#include <cstring>
#include <ctime>
#include <sched.h>

#include <gpumemtrace/format/record_codec.h>
#include <gpumemtrace/format/ring_slot.h>

namespace gmt::preload {

using format::ByteWriter;
using format::FrameHeader;
using format::RecordTag;

namespace {
// How long the end of a trace waits for calls that took a position and have not filled it
// yet: normally a few nanoseconds of straight-line code, or a free still inside the driver.
constexpr uint64_t kEndWaitNs = 2'000'000'000;
constexpr uint64_t kEndWaitFromSignalNs = 500'000'000;
} // namespace

bool LogWriter::addRecord(RecordTag tag, const uint8_t* body, size_t size) {
    ByteWriter w(frame_ + sizeof(FrameHeader) + payload_size_, kFrameCapacity - payload_size_);
    format::appendRecord(w, tag, body, size);
    if (!w.ok()) {
        return false; // what it wrote lies past payload_size_: not part of the frame
    }
    payload_size_ += w.size();
    ++payload_records_;
    return true;
}

void LogWriter::stop(bool out_of_memory) {
    failed_ = true;
    payload_size_ = 0;
    payload_records_ = 0;
    // Durable at once (the prologue is part of the shared mapping). The ring keeps what the
    // log could not take; every later call is counted as dropped instead of waiting for
    // room that will never come.
    file_.markLogFailed(out_of_memory);
    ring_.seal(true);
    ring_.abandon();
    if (out_of_memory) {
        // No argument to format: a message this short is built without allocating.
        logger().error("out of host memory for the aggregated trace; tracing stops here "
                       "(the trace says so)");
    } else {
        logger().error("writing to {} failed; tracing stops here (the trace says so)",
                       printable(file_.path()));
    }
}

bool LogWriter::flushFrame(uint64_t end_seq) {
    FrameHeader h{};
    h.magic = format::kFrameMagic;
    h.payload_size = static_cast<uint32_t>(payload_size_);
    h.record_count = payload_records_;
    h.end_seq = end_seq;
    h.checksum = format::frameChecksum(h, frame_ + sizeof(FrameHeader));
    std::memcpy(frame_, &h, sizeof h);
    if (!file_.append(frame_, sizeof h + payload_size_)) {
        stop(false);
        return false;
    }
    payload_size_ = 0;
    payload_records_ = 0;
    return true;
}

bool LogWriter::writeDirect(RecordTag tag, const uint8_t* body, size_t size) {
    std::lock_guard lock(mutex_);
    if (failed_) {
        return false;
    }
    if (addRecord(tag, body, size)) {
        return true;
    }
    // Full: the records so far go out as a frame of their own, and the record starts the
    // next one (unless it is larger than any frame).
    return payload_size_ > 0 && flushFrame(ring_.tail()) && addRecord(tag, body, size);
}

bool LogWriter::flushDirect() {
    std::lock_guard lock(mutex_);
    return !failed_ && (payload_size_ == 0 || flushFrame(ring_.tail()));
}

void LogWriter::flushThrough(uint64_t pos) {
    if (payload_size_ > 0 && !flushFrame(pos)) {
        return; // the ring keeps everything from the tail on
    }
    if (aggregator_) {
        folded_ = pos;
        // A checkpoint every quarter ring: the ring keeps what was folded since the last
        // one, and the writer thread is woken at half a ring of backlog.
        if (pos - ring_.tail() < ring_.slots() / 4 || !writeCheckpoint(pos)) {
            return;
        }
    }
    ring_.setTail(pos);
}

bool LogWriter::writeCheckpoint(uint64_t end_seq) {
    ++checkpoints_;
    format::CheckpointHeader h{};
    h.magic = format::kCheckpointMagic;
    h.sequence = checkpoints_;
    h.end_seq = end_seq;
    uint32_t records = 0;
    if (!aggregator_->encode(checkpoints_, file_.checkpointRegion() - sizeof h, sizeof h,
                             checkpoint_, records)) {
        stop(true);
        return false;
    }
    h.record_count = records;
    h.payload_size = checkpoint_.size() - sizeof h;
    h.checksum = format::checkpointChecksum(h, checkpoint_.data() + sizeof h);
    std::memcpy(checkpoint_.data(), &h, sizeof h);
    // Alternate regions: a kill while one is written leaves the other whole.
    if (!file_.writeCheckpoint(checkpoints_ % 2, checkpoint_.data(), checkpoint_.size())) {
        stop(false);
        return false;
    }
    return true;
}

bool LogWriter::waitCommitted(uint64_t pos, uint64_t deadline_ns) {
    while (!ring_.committed(pos)) {
        if (nowNs() >= deadline_ns) {
            return false;
        }
        sched_yield();
    }
    return true;
}

void LogWriter::drainLocked(const Ends& ends) {
    if (finished_ || failed_) {
        return;
    }
    const uint64_t wait_until_ns = ends.wait_until_ns;
    // Aggregated, the ring is freed only at checkpoints: what lies between was folded.
    uint64_t pos = aggregator_ ? std::max(ring_.tail(), folded_) : ring_.tail();
    PhaseAccounting* const accounting = accounting_.load(std::memory_order_relaxed);
    // A position not filled yet. Ordinary drains stop there; the end of the trace waits.
    auto awaited = [&](uint64_t p) {
        if (wait_until_ns == 0) {
            return false;
        }
        flushThrough(pos); // lets producers that wait for room go on
        const bool own = p >= ends.own_first && p < ends.own_end;
        return !failed_ && !own && waitCommitted(p, wait_until_ns);
    };
    while (pos < ends.limit && !failed_) {
        if (!ring_.committed(pos) && !awaited(pos)) {
            if (wait_until_ns == 0 || failed_) {
                break;
            }
            ++unfinished_; // given up: the next frame covers it
            ++pos;
            continue;
        }
        format::Slot& slot = ring_.at(pos);
        if (slot.type == format::SlotType::Event && aggregator_) {
            format::Event e;
            std::memcpy(&e, slot.payload, sizeof e);
            if (!aggregator_->onEvent(pos, e)) {
                stop(true); // the event stays in the ring
                break;
            }
            ++events_;
            ++pos;
        } else if (slot.type == format::SlotType::Event) {
            // A run of committed events, encoded from the slots themselves (a committed slot
            // does not change until the tail passes it), with the frame's state in registers.
            uint8_t* const payload = frame_ + sizeof(FrameHeader);
            uint8_t* out = payload + payload_size_;
            const uint64_t first = pos;
            // A phase opens and closes only at a Phase record, never inside a run of events.
            PhaseAccounting* const accounted =
                accounting && accounting->wantsEvents() ? accounting : nullptr;
            do {
                if (accounted) [[unlikely]] {
                    format::Event e;
                    std::memcpy(&e, ring_.at(pos).payload, sizeof e);
                    accounted->onEvent(e);
                }
                out += format::encodeEventRecordTo(out, ring_.at(pos).payload, prev_);
                ++pos;
            } while (out < payload + kFlushAt && pos < ends.limit && ring_.committed(pos) &&
                     ring_.at(pos).type == format::SlotType::Event);
            payload_size_ = static_cast<size_t>(out - payload);
            payload_records_ += static_cast<uint32_t>(pos - first);
            events_ += pos - first;
        } else if (slot.type == format::SlotType::Blob) {
            // A blob is an already framed record split over consecutive slots.
            uint32_t length = slot.length;
            uint32_t parts = format::recordSlots(length);
            if (length == 0 || length > kBlobCapacity) {
                ++pos; // cannot come from our producers; skip rather than stall forever
                continue;
            }
            uint32_t ready = 1;
            while (ready < parts && (ring_.committed(pos + ready) || awaited(pos + ready))) {
                ++ready;
            }
            if (ready < parts) {
                if (wait_until_ns == 0 || failed_) {
                    break;
                }
                unfinished_ += parts;
                pos += parts;
                continue;
            }
            if (!format::joinRecord(slot, blob_,
                                    [&](uint32_t part) { return &ring_.at(pos + part); })) {
                pos += parts; // a committed part that is no continuation: not our producers'
                continue;
            }
            if (accounting) {
                accounting->onRecord(pos, blob_, length);
            }
            if (aggregator_ && blob_[0] == static_cast<uint8_t>(RecordTag::Phase)) {
                // In order with the events.
                if (!aggregator_->onPhase(pos, blob_, length)) {
                    stop(true);
                    break;
                }
                pos += parts;
                continue;
            }
            if (aggregator_ && blob_[0] == static_cast<uint8_t>(RecordTag::CachingAllocator) &&
                !aggregator_->onCachingAllocator(blob_, length)) { // and to the log, below
                stop(true);
                break;
            }
            if (payload_size_ + length > kFrameCapacity) {
                flushThrough(pos);
                if (failed_) {
                    return;
                }
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
    if (!failed_) {
        flushThrough(pos);
    }
}

void LogWriter::drain() {
    std::lock_guard lock(mutex_);
    drainLocked({~uint64_t{0}, 0, 0, 0});
}

bool LogWriter::tryDrain() {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (!lock.owns_lock()) {
        return false;
    }
    drainLocked({~uint64_t{0}, 0, 0, 0});
    return true;
}

void LogWriter::finish(format::TrailerInfo trailer, uint64_t end, uint64_t own_first,
                       uint64_t own_end, bool from_signal) {
    std::unique_lock lock(mutex_, std::defer_lock);
    const uint64_t deadline = nowNs() + (from_signal ? kEndWaitFromSignalNs : kEndWaitNs);
    if (from_signal) {
        // No blocking lock in a signal handler. The writer thread may hold it for a drain,
        // which ends soon (giving up at once lost the trailer, and the signal it names, to
        // that race); this thread may hold it itself (a crash inside a drain), which never
        // ends. Past the deadline, the ring still holds everything and the reader recovers it.
        while (!lock.try_lock()) {
            if (nowNs() >= deadline) {
                return;
            }
            const timespec pause{0, 50'000}; // nanosleep: async-signal-safe
            nanosleep(&pause, nullptr);
        }
    } else {
        lock.lock();
    }
    if (finished_) {
        return;
    }
    drainLocked({end, deadline, own_first, own_end});
    if (failed_) {
        finished_ = true;
        return; // no trailer can be written; the prologue says why
    }
    trailer.events = events_;
    trailer.dropped_events = ring_.dropped();
    trailer.in_flight = unfinished_;
    uint8_t body[96];
    ByteWriter w(body, sizeof body);
    format::encodeTrailer(w, trailer);
    if (aggregator_) {
        // The trailer ends the last checkpoint. Not from a signal handler: encoding one
        // allocates; the previous checkpoint and the ring still hold everything.
        uint8_t record[Aggregator::kMaxTrailer];
        ByteWriter r(record, sizeof record);
        format::appendRecord(r, RecordTag::Trailer, body, w.size());
        aggregator_->setTrailer(record, r.size());
        if (!from_signal && (payload_size_ == 0 || flushFrame(end)) && writeCheckpoint(end)) {
            ring_.setTail(end);
            folded_ = end;
        }
        finished_ = true;
        return;
    }
    // The drain above left the frame empty, and a trailer is a few varints: it fits.
    if ((!w.ok() || !addRecord(RecordTag::Trailer, body, w.size())) && !from_signal) {
        logger().error("the trailer of {} did not fit its frame; the trace ends without one",
                       printable(file_.path()));
    }
    flushFrame(end);
    finished_ = true;
}

void LogWriter::reopen(uint64_t next) {
    std::lock_guard lock(mutex_);
    if (failed_) {
        return;
    }
    finished_ = false;
    if (aggregator_) {
        aggregator_->clearTrailer();
        folded_ = next;
    }
    ring_.setTail(next);
}

} // namespace gmt::preload
