// A run of consecutive log frames, read and decoded as one unit of work: the scan reads
// whole frames from the file and checks their headers (in file order, one batch after the
// other); the decode checks each frame's checksum and decodes its records (any batch, on
// any thread). The records come out as they would from reading the log one record at a
// time: the same records, values and order, and the same place and reason where the valid
// log ends. Memory is bounded by the batch's bytes: nothing is sized from a file field
// without a bound.
#pragma once

#include "read/event_stores.h"
#include "read/trace_file.h"

#include <gpumemtrace/format/event_codec.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gmt::analyzer {

// Where the valid log ends, and why when it is not the clean end (the end of the file,
// or the zeros the recorder grows the file by).
struct LogEnd {
    uint64_t offset = 0;
    bool damaged = false;
    std::string reason; // when damaged
};

// A non-event record: decoded again, from the batch's bytes, when it is handed out (they
// are rare, and can be large once decoded).
struct OtherRecord {
    uint32_t events_before = 0; // events of the batch that come before it
    uint32_t input_pos = 0;     // where its tag is in FrameBatch::input
};

struct FrameBatch {
    // Scan: whole frames [offset, offset + bytes) of the file, at the start of `input`,
    // and where each frame starts in it.
    uint64_t offset = 0;
    // Kept between uses (a batch is recycled), so it may hold more than `bytes`; at least
    // 8 more, which the decoder may load but never uses (frame_batch.cpp, kLoadSlack).
    std::vector<uint8_t> input;
    size_t bytes = 0;
    std::vector<uint32_t> frames;
    // The log ends inside this batch or right after it (set by the scan, or by the decode
    // at a frame or record that fails).
    std::optional<LogEnd> end;
    // One frame larger than a batch: too large to decode ahead (its events could take
    // many times its bytes), so its reader streams it (decodeFrameRecords).
    bool large = false;

    // Decode: the events in order, and the other records with their place among them.
    struct FreeEvents {
        void operator()(format::Event* p) const { std::free(p); }
    };
    std::unique_ptr<format::Event[], FreeEvents> events;
    size_t event_count = 0;
    size_t event_capacity = 0;
    std::vector<OtherRecord> others;
    // The delta state to decode from (the true one, or zeroCoder() when it is not known
    // yet: `based` false), then the state after the last record decoded.
    format::EventCoder coder{};
    bool based = true;
    uint64_t end_seq = 0;         // of the last frame decoded whole and valid (0: none)
    uint64_t skipped_records = 0; // unknown tags

    // The file offset just after the batch's last frame: where the next batch starts.
    uint64_t nextOffset() const { return offset + bytes; }
    // Memory held, for the read-ahead budget.
    size_t heldBytes() const;
};

// Reads the frames from `offset` on into `b` (emptied first): as many whole frames as fit
// in `bytes`, at least one (a larger first frame is read whole and marked `large`). Checks
// their headers; the first header that fails, or the end of the log, sets `b.end`.
void scanFrames(const TraceFile& file, uint64_t offset, size_t bytes, FrameBatch& b);

// Checks the scanned frames' checksums and decodes their records from `b.coder` (one
// frame marked `large` is not decoded: see decodeFrameRecords). The first frame or record
// that fails ends the log there: the records before it are kept. `stores`: Streamed when
// another thread will read the events (event_stores.h).
void decodeFrames(FrameBatch& b, EventStores stores);

// Turns a batch decoded from zeroCoder() into the exact one, given the true state before
// it (event_rebase.h).
void rebaseFrames(FrameBatch& b, const format::EventCoder& base);

// Where streaming a large frame has got to.
struct FrameCursor {
    bool checked = false; // its checksum
    size_t pos = 0;       // in its payload
    uint32_t records = 0; // decoded so far
};

// Streams the batch's one large frame: the first call checks its checksum; each call
// decodes up to `max_records` more records into `b` (replacing the ones it held) from
// `b.coder`. Returns false once the frame is done: whole and valid (b.end_seq set), or
// failed (b.end set), as decodeFrames would have.
bool decodeFrameRecords(FrameBatch& b, FrameCursor& cursor, size_t max_records);

} // namespace gmt::analyzer
