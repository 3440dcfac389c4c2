#include "record_decoder.h"

#include <cstddef>
#include <cstring>

namespace gmt::analyzer {

using format::RecordTag;

namespace {

// A varint as format::ByteReader::varint reads it (at most 10 bytes, bits past 64
// dropped), from [p, end). False when it runs past `end` or is longer than 10 bytes.
// (A branch-free 8-byte-load variant measured slower: field lengths repeat per op, so
// the byte loop predicts well.)
inline bool readVarint(const uint8_t*& p, const uint8_t* end, uint64_t& out) {
    if (p != end && *p < 0x80) [[likely]] {
        out = *p++;
        return true;
    }
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (p == end) {
            return false;
        }
        uint8_t b = *p++;
        v |= static_cast<uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            out = v;
            return true;
        }
    }
    return false;
}

inline uint64_t unzigzag(uint64_t v) {
    return (v >> 1) ^ (~(v & 1) + 1);
}

// The Event as 13 little-endian words, so that a decode reads and writes whole words:
// narrow field stores followed by a wide copy of the struct stall on store forwarding.
static_assert(sizeof(format::Event) == 13 * 8);
static_assert(offsetof(format::Event, actual_size) == 3 * 8);
static_assert(offsetof(format::Event, handle) == 4 * 8);
static_assert(offsetof(format::Event, stream) == 5 * 8);
static_assert(offsetof(format::Event, context) == 6 * 8);
static_assert(offsetof(format::Event, offset) == 7 * 8);
static_assert(offsetof(format::Event, device_free) == 8 * 8);
static_assert(offsetof(format::Event, device_total) == 9 * 8);
static_assert(offsetof(format::Event, flags) == 10 * 8);
static_assert(offsetof(format::Event, stack_id) == 10 * 8 + 4);
static_assert(offsetof(format::Event, tid) == 11 * 8);
static_assert(offsetof(format::Event, result) == 11 * 8 + 4);
static_assert(offsetof(format::Event, device) == 12 * 8);
static_assert(offsetof(format::Event, op) == 12 * 8 + 2);
static_assert(offsetof(format::Event, api) == 12 * 8 + 3);
static_assert(offsetof(format::Event, kind) == 12 * 8 + 4);

// format::decodeEventBody on a raw body, with the same result and the same coder update:
// every field is the previous event's (of the same op) plus a zigzag delta, added with
// wrap-around in the field's own width (which is what the generic walk's widen, add,
// truncate amounts to). On malformed input neither `out` nor the coder changes.
inline bool decodeEventFast(const uint8_t* p, const uint8_t* end, format::Event& out,
                            format::EventCoder& coder) {
    uint64_t op = 0, mask = 0;
    if (!readVarint(p, end, op) || !readVarint(p, end, mask)) {
        return false;
    }
    if (op == 0 || op >= format::kOpSlots || mask >> format::kEventFields) {
        return false;
    }
    // Thirteen words in registers, loaded and stored one word at a time: a spilled array
    // copied out with 16-byte moves right after 8-byte stores stalls on store forwarding.
    auto* prev = reinterpret_cast<unsigned char*>(&coder.prev[op]);
    auto load = [prev](int i) {
        uint64_t x;
        std::memcpy(&x, prev + 8 * i, 8);
        return x;
    };
    uint64_t w0 = load(0), w1 = load(1), w2 = load(2), w3 = load(3), w4 = load(4), w5 = load(5),
             w6 = load(6), w7 = load(7), w8 = load(8), w9 = load(9), w10 = load(10), w11 = load(11),
             w12 = load(12);
    // Fields in mask-bit order (the order the deltas are stored); a repeating mask
    // predicts well, and nothing is touched for absent fields.
    uint64_t v = 0;
#define GMT_FIELD(bit, stmt)                                                                       \
    if (mask & (uint64_t{1} << bit)) {                                                             \
        if (!readVarint(p, end, v)) {                                                              \
            return false;                                                                          \
        }                                                                                          \
        v = unzigzag(v);                                                                           \
        stmt;                                                                                      \
    }
    uint64_t d3 = 0, d4 = 0, d5 = 0, d6 = 0, d7 = 0, d8 = 0, d14 = 0;
    GMT_FIELD(0, w0 += v)  // time_ns
    GMT_FIELD(1, w1 += v)  // address
    GMT_FIELD(2, w2 += v)  // size
    GMT_FIELD(3, d3 = v)   // stack_id
    GMT_FIELD(4, d4 = v)   // api
    GMT_FIELD(5, d5 = v)   // kind
    GMT_FIELD(6, d6 = v)   // tid
    GMT_FIELD(7, d7 = v)   // device
    GMT_FIELD(8, d8 = v)   // result
    GMT_FIELD(9, w3 += v)  // actual_size
    GMT_FIELD(10, w4 += v) // handle
    GMT_FIELD(11, w7 += v) // offset
    GMT_FIELD(12, w8 += v) // device_free
    GMT_FIELD(13, w9 += v) // device_total
    GMT_FIELD(14, d14 = v) // flags
    GMT_FIELD(15, w6 += v) // context
    GMT_FIELD(16, w5 += v) // stream
#undef GMT_FIELD
    const uint64_t flags = static_cast<uint32_t>(w10 + d14);
    const uint64_t stack = static_cast<uint32_t>((w10 >> 32) + d3);
    w10 = flags | stack << 32;
    const uint64_t tid = static_cast<uint32_t>(w11 + d6);
    const uint64_t result = static_cast<uint32_t>((w11 >> 32) + d8);
    w11 = tid | result << 32;
    const uint64_t device = static_cast<uint16_t>(w12 + d7);
    const uint64_t api = static_cast<uint8_t>((w12 >> 24) + d4);
    const uint64_t kind = static_cast<uint8_t>((w12 >> 32) + d5);
    w12 = (w12 & 0xffffff0000000000ull) | kind << 32 | api << 24 | op << 16 | device;
    auto* o = reinterpret_cast<unsigned char*>(&out);
    auto store = [prev, o](int i, uint64_t x) {
        std::memcpy(prev + 8 * i, &x, 8);
        std::memcpy(o + 8 * i, &x, 8);
    };
    store(0, w0);
    store(1, w1);
    store(2, w2);
    store(3, w3);
    store(4, w4);
    store(5, w5);
    store(6, w6);
    store(7, w7);
    store(8, w8);
    store(9, w9);
    store(10, w10);
    store(11, w11);
    store(12, w12);
    return true;
}

} // namespace

DecodeStatus decodeRecord(format::ByteReader& r, Record& out, format::EventCoder& prev) {
    uint8_t tag = r.byte();
    uint64_t length = r.varint();
    if (!r.ok() || length > format::kMaxRecordSize || length > r.remaining()) {
        return DecodeStatus::Malformed;
    }
    auto bytes = r.bytes(length);
    if (static_cast<RecordTag>(tag) == RecordTag::Event) [[likely]] {
        if (!decodeEventFast(bytes.data(), bytes.data() + bytes.size(), out.event, prev)) {
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
