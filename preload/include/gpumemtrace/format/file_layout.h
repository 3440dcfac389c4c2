// Where things lie in a trace file, and the two fixed structures that say so: the
// prologue (first page) and the header of each log frame, with their checksums. The
// prose description is docs/trace-format.md (Layout, Prologue, Log frames).
//
//   0            4096                   4096 + slots*128
//   +------------+----------------------+-----------------------------------------+
//   | prologue   | ring (MAP_SHARED)    | log: frame, frame, frame, ...           |
//   +------------+----------------------+-----------------------------------------+
//
// Producers (application threads) commit fixed-size slots into the ring, which is a
// shared mapping of the file itself: a committed slot is in the page cache the moment
// the call returns, so it survives SIGKILL. The writer thread drains slots in sequence
// order into compact, checksummed frames appended to the log. A reader takes every valid
// frame, then every committed ring slot whose sequence number the frames do not cover.
#pragma once

#include <gpumemtrace/format/checksum.h>

#include <cstddef>
#include <cstdint>

namespace gmt::format {

inline constexpr char kMagic[8] = {'G', 'M', 'T', 'R', 'A', 'C', 'E', '\0'};
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint64_t kPrologueSize = 4096;
inline constexpr uint32_t kSlotSize = 128;
inline constexpr uint32_t kFrameMagic = 0x52464d47; // "GMFR" little-endian
inline constexpr uint32_t kMaxFramePayload = 16u << 20;
inline constexpr uint32_t kMinRingSlots = 1024;
inline constexpr uint32_t kMaxRingSlots = 1u << 24;

// Prologue: the first 4096 bytes. Written once at creation, except `dropped_events`,
// `flags` and `control`, which change in place (they live in the shared mapping, so they
// are durable): the first two by the recorder, `control` by `gpumemtrace control`.
struct Prologue {
    char magic[8];
    uint32_t format_version;
    uint32_t prologue_size; // sizeof(Prologue)
    uint64_t ring_offset;   // = kPrologueSize
    uint32_t ring_slots;    // power of two, kMinRingSlots..kMaxRingSlots
    uint32_t slot_size;     // = kSlotSize
    uint64_t log_offset;    // = ring_offset + ring_slots * slot_size
    uint64_t dropped_events;
    uint32_t flags;    // kPrologue* bits
    uint32_t checksum; // crc32c of the bytes before `dropped_events`
    // --- appended (prologue_size 64); a 56-byte prologue has none: read as 0 ------------
    // Whether the recorder records: kControl* below. Another process (`gpumemtrace
    // control`) stores into it through its own shared mapping of the file; the recorder
    // loads it, relaxed, once per intercepted call.
    uint32_t control;
    uint32_t reserved; // 0
};
static_assert(sizeof(Prologue) == 64);
inline constexpr size_t kPrologueChecksummedBytes = offsetof(Prologue, dropped_events);
// Prologues written before `control` existed end after `checksum`.
inline constexpr uint32_t kMinPrologueSize = offsetof(Prologue, control);
static_assert(kMinPrologueSize == 56);

// Prologue control word. 0: recording (the only value the recorder's hot path tests for).
// Paused: calls pass through unrecorded. ResumeRequested: `control resume` asks; the
// recorder writes a Resume record at the next call and stores 0. The recorder writes a
// Pause record (RecordTag::Recording) at the first call it finds paused.
inline constexpr uint32_t kControlRecording = 0;
inline constexpr uint32_t kControlPaused = 1;
inline constexpr uint32_t kControlResumeRequested = 2;

// Prologue flags. The log could not be written (full file system, quota, file size
// limit): the recorder stopped there. What the log lacks is in the ring; every call after
// the failure counts in `dropped_events`.
inline constexpr uint32_t kPrologueLogFailed = 1u << 0;
// With kPrologueLogFailed: the recorder stopped because it ran out of host memory for its
// own tables (an aggregated trace's), not because the file could not be written.
inline constexpr uint32_t kPrologueOutOfMemory = 1u << 2;

// Log frames. A frame is written with one pwrite; the checksum covers everything after
// the checksum field (header rest + payload), so a torn or partly written frame fails it.
struct FrameHeader {
    uint32_t magic;        // kFrameMagic
    uint32_t checksum;     // crc32c(payload_size..end of payload)
    uint32_t payload_size; // bytes of records following this header
    uint32_t record_count;
    uint64_t end_seq; // ring sequence position just after the last slot this frame covers
};
static_assert(sizeof(FrameHeader) == 24);

inline uint32_t frameChecksum(const FrameHeader& h, const uint8_t* payload) {
    uint32_t crc =
        crc32c(&h.payload_size, sizeof(FrameHeader) - offsetof(FrameHeader, payload_size));
    return crc32c(payload, h.payload_size, crc);
}

inline uint32_t prologueChecksum(const Prologue& p) {
    return crc32c(&p, kPrologueChecksummedBytes);
}

} // namespace gmt::format
