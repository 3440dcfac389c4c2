// A ring slot, and how a record lies across slots: the one place that splits a record
// into slots (the recorder's producers) and joins it back (the recorder's log writer, the
// analyzer's ring recovery), so that the three can never disagree on the layout.
// docs/trace-format.md, "Ring slots".
#pragma once

#include <gpumemtrace/format/event.h>
#include <gpumemtrace/format/file_layout.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace gmt::format {

// Ring slot (kSlotSize bytes). `seq` is written last, with release ordering: the slot
// holds the record for sequence position p exactly when seq == p + 1. A record longer
// than one slot (stacks, modules) takes consecutive positions: a Blob slot carrying the
// total length, then BlobCont slots; every part must be committed for the record to count.
enum class SlotType : uint8_t { Event = 1, Blob = 2, BlobCont = 3 };

struct Slot {
    uint64_t seq;
    SlotType type;
    uint8_t reserved[3];
    uint32_t length; // Blob: total encoded record bytes (tag + length + body)
    uint8_t payload[kSlotSize - 16];
};
static_assert(sizeof(Slot) == kSlotSize);
inline constexpr uint32_t kSlotPayload = kSlotSize - 16;
static_assert(sizeof(Event) <= kSlotPayload);

// An event takes one slot, stored raw (not delta-coded: a producer must not wait for the
// coder's state). Everything but `seq`, which the caller writes last to commit it.
inline void fillEventSlot(Slot& slot, const Event& e) {
    slot.type = SlotType::Event;
    slot.length = 0;
    std::memcpy(slot.payload, &e, sizeof e);
}

// How many consecutive slots an encoded record (tag, length, body) of `length` bytes takes.
constexpr uint32_t recordSlots(uint32_t length) {
    return (length + kSlotPayload - 1) / kSlotPayload;
}

// Fills slot `part` (0 .. recordSlots(length) - 1) of the record at `record`: everything
// but `seq`. Part 0 is the Blob that carries the length, the rest its continuations.
inline void fillRecordSlot(Slot& slot, const uint8_t* record, uint32_t length, uint32_t part) {
    slot.type = part == 0 ? SlotType::Blob : SlotType::BlobCont;
    slot.length = part == 0 ? length : 0;
    const uint32_t off = part * kSlotPayload;
    std::memcpy(slot.payload, record + off, std::min(kSlotPayload, length - off));
}

// Splits the record over its slots: `slot_at(part)` names the slot each part goes to.
template <typename SlotAt>
void splitRecord(const uint8_t* record, uint32_t length, SlotAt&& slot_at) {
    const uint32_t parts = recordSlots(length);
    for (uint32_t part = 0; part < parts; ++part) {
        fillRecordSlot(slot_at(part), record, length, part);
    }
}

// Joins the record that `first` (a Blob slot, its length already checked against the
// caller's buffer) starts into `out`, which has room for first.length bytes.
// `slot_at(part)` gives part `part` (1 .. recordSlots - 1) in order, or nullptr when it is
// not there (never committed, unreadable); false when a part is missing or is not a
// continuation: the record is lost, and the caller skips it.
template <typename SlotAt> bool joinRecord(const Slot& first, uint8_t* out, SlotAt&& slot_at) {
    const uint32_t length = first.length;
    const uint32_t parts = recordSlots(length);
    std::memcpy(out, first.payload, std::min(kSlotPayload, length));
    for (uint32_t part = 1; part < parts; ++part) {
        const Slot* slot = slot_at(part);
        if (slot == nullptr || slot->type != SlotType::BlobCont) {
            return false;
        }
        const uint32_t off = part * kSlotPayload;
        std::memcpy(out + off, slot->payload, std::min(kSlotPayload, length - off));
    }
    return true;
}

} // namespace gmt::format
