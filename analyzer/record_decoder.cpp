#include "record_decoder.h"

namespace gmt::analyzer {

using format::RecordTag;

DecodeStatus decodeRecord(format::ByteReader& r, Record& out, format::EventCoder& prev) {
    uint8_t tag = r.byte();
    uint64_t length = r.varint();
    if (!r.ok() || length > format::kMaxRecordSize || length > r.remaining()) {
        return DecodeStatus::Malformed;
    }
    auto bytes = r.bytes(length);
    if (static_cast<RecordTag>(tag) == RecordTag::Event) [[likely]] {
        if (!format::decodeEventBody(bytes.data(), bytes.data() + bytes.size(), out.event, prev)) {
            return DecodeStatus::Malformed;
        }
        out.tag = RecordTag::Event;
        return DecodeStatus::Ok;
    }
    format::ByteReader body(bytes);
    bool ok = true;
    switch (static_cast<RecordTag>(tag)) {
    case RecordTag::Header:
        ok = format::decodeHeader(body, out.header);
        break;
    case RecordTag::Device:
        ok = format::decodeDevice(body, out.device);
        break;
    case RecordTag::Module:
        ok = format::decodeModule(body, out.module);
        break;
    case RecordTag::Stack:
        ok = format::decodeStack(body, out.stack);
        break;
    case RecordTag::Trailer:
        ok = format::decodeTrailer(body, out.trailer);
        break;
    case RecordTag::Phase:
        ok = format::decodePhase(body, out.phase);
        break;
    case RecordTag::PythonCode:
        ok = format::decodePythonCode(body, out.python_code);
        break;
    case RecordTag::CachingAllocator:
        ok = format::decodeCachingAllocator(body, out.caching_allocator);
        break;
    default:
        return DecodeStatus::Skipped;
    }
    if (!ok) {
        return DecodeStatus::Malformed;
    }
    out.tag = static_cast<RecordTag>(tag);
    return DecodeStatus::Ok;
}

} // namespace gmt::analyzer
