#include "read/record_decoder.h"

#include <gpumemtrace/format/event_codec.h>
#include <gpumemtrace/format/record_codec.h>

namespace gmt::analyzer {

using format::RecordTag;

DecodeStatus decodeRecordBody(uint8_t tag, std::span<const uint8_t> body, Record& out,
                              format::EventCoder& prev) {
    if (static_cast<RecordTag>(tag) == RecordTag::Event) [[likely]] {
        if (!format::decodeEventBody(body.data(), body.data() + body.size(), out.event, prev)) {
            return DecodeStatus::Malformed;
        }
        out.tag = RecordTag::Event;
        return DecodeStatus::Ok;
    }
    format::ByteReader r(body);
    bool ok = true;
    switch (static_cast<RecordTag>(tag)) {
    case RecordTag::Header:
        ok = format::decodeHeader(r, out.header);
        break;
    case RecordTag::Device:
        ok = format::decodeDevice(r, out.device);
        break;
    case RecordTag::Module:
        ok = format::decodeModule(r, out.module);
        break;
    case RecordTag::Stack:
        ok = format::decodeStack(r, out.stack);
        break;
    case RecordTag::Trailer:
        ok = format::decodeTrailer(r, out.trailer);
        break;
    case RecordTag::Phase:
        ok = format::decodePhase(r, out.phase);
        break;
    case RecordTag::PythonCode:
        ok = format::decodePythonCode(r, out.python_code);
        break;
    case RecordTag::CachingAllocator:
        ok = format::decodeCachingAllocator(r, out.caching_allocator);
        break;
    case RecordTag::Recording:
        ok = format::decodeRecording(r, out.recording);
        break;
    case RecordTag::AggregateSummary:
        ok = format::decodeAggregateSummary(r, out.aggregate);
        break;
    case RecordTag::SiteTotals:
        ok = format::decodeSiteTotals(r, out.site_totals);
        break;
    case RecordTag::PhaseTotals:
        ok = format::decodePhaseTotals(r, out.phase_totals);
        break;
    case RecordTag::FoldedPeak:
        ok = format::decodeFoldedPeak(r, out.folded_peak);
        break;
    case RecordTag::FoldedMark:
        ok = format::decodeFoldedMark(r, out.folded_mark);
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

DecodeStatus decodeRecord(format::ByteReader& r, Record& out, format::EventCoder& prev) {
    uint8_t tag = 0;
    std::span<const uint8_t> body;
    if (!readRecordFrame(r, tag, body)) {
        return DecodeStatus::Malformed;
    }
    return decodeRecordBody(tag, body, out, prev);
}

} // namespace gmt::analyzer
