#include "read/frame_batch.h"

#include "read/event_rebase.h"
#include "read/event_stores.h"
#include "read/record.h"
#include "read/record_decoder.h"

#include <algorithm>
#include <type_traits>

#include <gpumemtrace/format/byte_coding.h>
#include <gpumemtrace/format/file_layout.h>

namespace gmt::analyzer {

using format::FrameHeader;
using format::RecordTag;

namespace {

// The least bytes an event record takes (tag, body length, op, mask): a frame holds at
// most payload / this many events, whatever its header says.
constexpr size_t kMinEventRecord = 4;

// Bytes of `FrameBatch::input` kept after the frames read, never part of the log: the
// decoder loads varints 8 bytes at a time (format::detail::readVarint), and this lets the
// last bytes of the last frame take that path too.
constexpr size_t kLoadSlack = 8;

std::string tagName(RecordTag tag) {
    switch (tag) {
    case RecordTag::Header:
        return "header";
    case RecordTag::Device:
        return "device";
    case RecordTag::Module:
        return "module";
    case RecordTag::Stack:
        return "stack";
    case RecordTag::Event:
        return "event";
    case RecordTag::Trailer:
        return "trailer";
    case RecordTag::Phase:
        return "phase";
    case RecordTag::PythonCode:
        return "python_code";
    case RecordTag::CachingAllocator:
        return "caching_allocator";
    case RecordTag::Recording:
        return "recording";
    case RecordTag::AggregateSummary:
        return "aggregate_summary";
    case RecordTag::SiteTotals:
        return "site_totals";
    case RecordTag::PhaseTotals:
        return "phase_totals";
    case RecordTag::FoldedPeak:
        return "folded_peak";
    case RecordTag::FoldedMark:
        return "folded_mark";
    }
    return "unknown";
}

bool allZero(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    return std::all_of(b, b + n, [](uint8_t x) { return x == 0; });
}

LogEnd clean(uint64_t offset) {
    return LogEnd{offset, false, {}};
}

LogEnd damaged(uint64_t offset, std::string reason) {
    return LogEnd{offset, true, std::move(reason)};
}

FrameHeader headerAt(const FrameBatch& b, size_t frame) {
    FrameHeader h;
    std::memcpy(&h, b.input.data() + b.frames[frame], sizeof h);
    return h;
}

// Room for `n` events, keeping those decoded (a frame may hold more than it announces).
void reserveEvents(FrameBatch& b, size_t n) {
    if (n <= b.event_capacity) {
        return;
    }
    auto* grown =
        static_cast<format::Event*>(std::realloc(b.events.get(), n * sizeof(format::Event)));
    if (!grown) {
        throw std::bad_alloc();
    }
    (void)b.events.release();
    b.events.reset(grown);
    b.event_capacity = n;
}

void clearDecoded(FrameBatch& b) {
    b.event_count = 0;
    b.others.clear();
    b.end_seq = 0;
    b.skipped_records = 0;
}

// A record decoded only to know that it is well-formed: the reader decodes it again
// when it hands it out. One per thread, as it is large.
Record& scratchRecord() {
    thread_local std::unique_ptr<Record> scratch;
    if (!scratch) {
        scratch = std::make_unique<Record>();
    }
    return *scratch;
}

enum class FrameProgress { More, Done, Failed };

// Decodes the records of frame `frame` from `c` on, at most `max_records` of them. Done:
// the frame was whole and valid; Failed: it ends the log (b.end), after the records
// before the failure.
// A template on `stores`: the cached path is compiled as if streaming did not exist.
template <EventStores stores = EventStores::Cached>
FrameProgress decodeRecords(FrameBatch& b, size_t frame, FrameCursor& c, size_t max_records) {
    const FrameHeader h = headerAt(b, frame);
    const uint8_t* payload = b.input.data() + b.frames[frame] + sizeof h;
    const uint64_t frame_offset = b.offset + b.frames[frame];
    if (!c.checked) {
        if (format::frameChecksum(h, payload) != h.checksum) {
            b.end = damaged(frame_offset, "frame checksum mismatch");
            return FrameProgress::Failed;
        }
        c.checked = true;
    }
    format::ByteReader r(std::span<const uint8_t>(payload + c.pos, h.payload_size - c.pos));
    const uint8_t* readable = b.input.data() + b.input.size();
    for (size_t n = 0; !r.atEnd(); ++n) {
        const size_t record_pos = h.payload_size - r.remaining();
        if (n == max_records) {
            c.pos = record_pos;
            return FrameProgress::More;
        }
        ++c.records;
        uint8_t tag = 0;
        std::span<const uint8_t> body;
        DecodeStatus s = DecodeStatus::Malformed;
        if (readRecordFrame(r, tag, body)) {
            if (static_cast<RecordTag>(tag) == RecordTag::Event) [[likely]] {
                if (b.event_count == b.event_capacity) {
                    // More events than the frames announced: grow, within what the
                    // batch's bytes can hold.
                    reserveEvents(b, std::max(b.event_capacity + 1,
                                              std::min(std::max<size_t>(64, 2 * b.event_capacity),
                                                       b.bytes / kMinEventRecord)));
                }
                using WordStore = std::conditional_t<stores == EventStores::Streamed,
                                                     StreamedWordStore, format::PlainWordStore>;
                if (format::decodeEventBody(body.data(), body.data() + body.size(), readable,
                                            b.events[b.event_count], b.coder, WordStore{}))
                    [[likely]] {
                    ++b.event_count;
                    continue;
                }
            } else {
                s = decodeRecordBody(tag, body, scratchRecord(), b.coder);
            }
        }
        if (s == DecodeStatus::Skipped) {
            ++b.skipped_records;
            continue;
        }
        if (s == DecodeStatus::Malformed) {
            b.end = damaged(frame_offset + sizeof h + record_pos,
                            "malformed " + tagName(static_cast<RecordTag>(payload[record_pos])) +
                                " record (frame checksum valid)");
            return FrameProgress::Failed;
        }
        b.others.push_back({static_cast<uint32_t>(b.event_count),
                            static_cast<uint32_t>(b.frames[frame] + sizeof h + record_pos)});
    }
    c.pos = h.payload_size;
    if (c.records != h.record_count) {
        b.end =
            damaged(frame_offset, "frame holds " + std::to_string(c.records) +
                                      " records but announces " + std::to_string(h.record_count));
        return FrameProgress::Failed;
    }
    b.end_seq = std::max(b.end_seq, h.end_seq);
    return FrameProgress::Done;
}

} // namespace

size_t FrameBatch::heldBytes() const {
    return input.capacity() + frames.capacity() * sizeof(uint32_t) +
           event_capacity * sizeof(format::Event) + others.capacity() * sizeof(OtherRecord);
}

void scanFrames(const TraceFile& file, uint64_t offset, size_t bytes, FrameBatch& b) {
    b.offset = offset;
    b.bytes = 0;
    b.frames.clear();
    b.end.reset();
    b.large = false;
    clearDecoded(b);
    const uint64_t size = file.size();
    if (offset >= size) {
        b.end = clean(offset);
        return;
    }
    const size_t want = static_cast<size_t>(std::min<uint64_t>(bytes, size - offset));
    if (b.input.size() < want + kLoadSlack) {
        b.input.resize(want + kLoadSlack);
    }
    size_t got = file.read(offset, b.input.data(), want);
    size_t pos = 0;
    for (;;) {
        const uint64_t at = offset + pos;
        if (at >= size) {
            b.end = clean(at);
            break;
        }
        FrameHeader h{};
        if (got - pos < sizeof h) {
            if (pos > 0) {
                break; // the next batch reads it
            }
            // The file ends inside this header (as read: it may have shrunk).
            if (!allZero(b.input.data(), got)) {
                b.end = damaged(at, "torn frame header (file ends after " + std::to_string(got) +
                                        " bytes)");
            } else {
                b.end = clean(at);
            }
            break;
        }
        std::memcpy(&h, b.input.data() + pos, sizeof h);
        if (h.magic != format::kFrameMagic) {
            // The recorder grows the file ahead of the log: zeros are where it stopped.
            b.end = allZero(&h, sizeof h) ? clean(at) : damaged(at, "bad frame magic");
            break;
        }
        if (h.payload_size > format::kMaxFramePayload) {
            b.end = damaged(at, "frame payload size " + std::to_string(h.payload_size) +
                                    " exceeds the limit");
            break;
        }
        if (h.payload_size > size - at - sizeof h) {
            b.end = damaged(at, "torn frame (" + std::to_string(h.payload_size) +
                                    " payload bytes announced, file ends first)");
            break;
        }
        const size_t frame = sizeof h + h.payload_size;
        if (frame > got - pos) {
            if (pos > 0) {
                break;
            }
            // The first frame is larger than what was read: read it whole, unless the
            // file turned out shorter than its size (then it is torn).
            if (got == want) {
                b.input.resize(frame + kLoadSlack);
                got += file.read(offset + got, b.input.data() + got, frame - got);
            }
            if (got < frame) {
                b.end = damaged(at, "torn frame (short read)");
                break;
            }
            b.large = frame > bytes;
        }
        b.frames.push_back(static_cast<uint32_t>(pos));
        pos += frame;
    }
    b.bytes = pos;
}

void decodeFrames(FrameBatch& b, EventStores stores) {
    clearDecoded(b);
    if (b.large) {
        return;
    }
    size_t bound = 0;
    for (size_t i = 0; i < b.frames.size(); ++i) {
        const FrameHeader h = headerAt(b, i);
        bound += std::min<size_t>(h.record_count, h.payload_size / kMinEventRecord);
    }
    reserveEvents(b, bound);
    for (size_t i = 0; i < b.frames.size(); ++i) {
        FrameCursor c;
        const FrameProgress done = stores == EventStores::Streamed
                                       ? decodeRecords<EventStores::Streamed>(b, i, c, SIZE_MAX)
                                       : decodeRecords(b, i, c, SIZE_MAX);
        if (done == FrameProgress::Failed) {
            break; // nothing after it is part of the log
        }
    }
    if (stores == EventStores::Streamed) {
        finishStreaming();
    }
}

void rebaseFrames(FrameBatch& b, const format::EventCoder& base) {
    for (size_t i = 0; i < b.event_count; ++i) {
        format::Event& e = b.events[i];
        prefetchEventsAhead(&e);
        rebaseEvent(e, base.prev[static_cast<size_t>(e.op)]);
    }
    rebaseCoder(b.coder, base);
    b.based = true;
}

bool decodeFrameRecords(FrameBatch& b, FrameCursor& cursor, size_t max_records) {
    clearDecoded(b);
    if (b.frames.empty()) {
        return false;
    }
    reserveEvents(b, max_records);
    return decodeRecords(b, 0, cursor, max_records) == FrameProgress::More;
}

} // namespace gmt::analyzer
