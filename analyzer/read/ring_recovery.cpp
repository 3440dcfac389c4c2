#include "read/ring_recovery.h"

#include "read/record_decoder.h"

#include <algorithm>

namespace gmt::analyzer {

using format::Slot;
using format::SlotType;

RingRecovery::RingRecovery(const TraceFile& file, const format::Prologue& prologue,
                           uint64_t first_uncovered)
    : file_(file), prologue_(prologue), expected_(first_uncovered) {
    const uint32_t slots = prologue_.ring_slots;
    const uint32_t kChunkSlots = std::min<uint32_t>(4096, slots);
    std::vector<Slot> chunk(kChunkSlots);
    for (uint32_t base = 0; base < slots; base += kChunkSlots) {
        uint32_t n = std::min(kChunkSlots, slots - base);
        size_t got = file_.read(prologue_.ring_offset + uint64_t{base} * format::kSlotSize,
                                chunk.data(), size_t{n} * format::kSlotSize);
        n = static_cast<uint32_t>(got / format::kSlotSize);
        for (uint32_t i = 0; i < n; ++i) {
            uint64_t seq = chunk[i].seq;
            if (seq == 0) {
                continue;
            }
            uint64_t position = seq - 1;
            // A slot only ever holds positions congruent to its index; anything else is
            // garbage (or a torn write of `seq`, which is written last).
            if ((position & (slots - 1)) != base + i || position < first_uncovered) {
                continue;
            }
            committed_.emplace_back(position, base + i);
        }
    }
    std::sort(committed_.begin(), committed_.end());
}

bool RingRecovery::readSlot(uint32_t index, Slot& slot) const {
    return file_.read(prologue_.ring_offset + uint64_t{index} * format::kSlotSize, &slot,
                      sizeof slot) == sizeof slot;
}

bool RingRecovery::next(Record& out, format::EventCoder& prev) {
    Slot slot{};
    while (cursor_ < committed_.size()) {
        // Named variables, not a structured binding: the join's callback uses the position.
        const uint64_t position = committed_[cursor_].first;
        const uint32_t index = committed_[cursor_].second;
        ++cursor_;
        if (position > expected_) {
            missing_ += position - expected_;
            missing_total_ += position - expected_;
        }
        expected_ = std::max(expected_, position + 1);
        if (!readSlot(index, slot)) {
            ++skipped_;
            continue;
        }
        if (slot.type == SlotType::Event) {
            std::memcpy(&out.event, slot.payload, sizeof(format::Event));
            out.tag = format::RecordTag::Event;
            out.from_ring = true;
            out.missing_before = std::exchange(missing_, 0);
            out.position = position;
            return true;
        }
        if (slot.type != SlotType::Blob || slot.length == 0 ||
            slot.length > format::kMaxRecordSize) {
            ++skipped_; // an orphaned continuation, or garbage
            continue;
        }
        const uint32_t parts = format::recordSlots(slot.length);
        // Its pieces' positions are its own, whether they were committed or not: a piece
        // never committed loses this record (skipped below), not an event.
        expected_ = std::max(expected_, position + parts);
        blob_.resize(slot.length);
        // The continuations are the next committed positions, taken from the cursor only
        // as far as they are whole continuations: a slot that is not stays for the loop.
        uint32_t asked = 0;
        Slot cont{};
        const bool whole =
            format::joinRecord(slot, blob_.data(), [&](uint32_t part) -> const Slot* {
                asked = part;
                const size_t at = cursor_ + part - 1;
                if (at >= committed_.size() || committed_[at].first != position + part ||
                    !readSlot(committed_[at].second, cont)) {
                    return nullptr; // a continuation never committed: the record is lost
                }
                return &cont;
            });
        cursor_ += whole ? asked : asked - 1;
        if (!whole) {
            ++skipped_;
            continue;
        }
        format::ByteReader r(blob_);
        if (decodeRecord(r, out, prev) != DecodeStatus::Ok) {
            ++skipped_;
            continue;
        }
        out.from_ring = true;
        out.missing_before = std::exchange(missing_, 0);
        out.position = position;
        return true;
    }
    return false;
}

} // namespace gmt::analyzer
