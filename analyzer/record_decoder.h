// Decoding of one encoded record (tag, varint body length, body), shared by the log
// reader and ring recovery, which store records the same way.
#pragma once

#include "record.h"

namespace gmt::analyzer {

enum class DecodeStatus {
    Ok,        // `out` holds a known record
    Skipped,   // well-formed, unknown tag: ignored for forward compatibility
    Malformed, // truncated, oversized or undecodable
};

// Reads one record from `r`. `prev` is the event delta state, updated by event records.
DecodeStatus decodeRecord(format::ByteReader& r, Record& out, format::EventCoder& prev);

} // namespace gmt::analyzer
