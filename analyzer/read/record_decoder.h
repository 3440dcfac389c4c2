// Decoding of one encoded record (tag, varint body length, body), shared by the log
// reader and ring recovery, which store records the same way.
#pragma once

#include "read/record.h"

#include <span>

#include <gpumemtrace/format/byte_coding.h>
#include <gpumemtrace/format/event_codec.h>

namespace gmt::analyzer {

enum class DecodeStatus {
    Ok,        // `out` holds a known record
    Skipped,   // well-formed, unknown tag: ignored for forward compatibility
    Malformed, // truncated, oversized or undecodable
};

// Reads one record's framing from `r`: its tag and its body (within the bounds of the
// record size and of what `r` holds). False when that framing is malformed. Inline: the
// decoders of frames run it for every record.
inline bool readRecordFrame(format::ByteReader& r, uint8_t& tag, std::span<const uint8_t>& body) {
    tag = r.byte();
    uint64_t length = r.varint();
    if (!r.ok() || length > format::kMaxRecordSize || length > r.remaining()) {
        return false;
    }
    body = r.bytes(length);
    return true;
}

// Decodes a body read by readRecordFrame. `prev` is the event delta state, updated by
// event records.
DecodeStatus decodeRecordBody(uint8_t tag, std::span<const uint8_t> body, Record& out,
                              format::EventCoder& prev);

// Both: reads and decodes one record from `r`.
DecodeStatus decodeRecord(format::ByteReader& r, Record& out, format::EventCoder& prev);

} // namespace gmt::analyzer
