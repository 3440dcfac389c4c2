// The event's delta coding in the log: the writer thread encodes every event through it
// and the analyzer decodes every event through it, so both directions are written for
// speed; docs/trace-format.md, "Event delta coding", gives the bytes.
#pragma once

#include <gpumemtrace/format/byte_coding.h>
#include <gpumemtrace/format/event.h>
#include <gpumemtrace/format/records.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gmt::format {

// Event delta coding. An event body starts with its op (varint); every other field is
// coded as the zigzag difference from the same field of the previous event *of the same
// op*, and a presence mask (varint) says which differ. Coding against the same op matters
// for the commonest pattern, an alloc/free loop: consecutive allocations share size, stack,
// device and context, so only the time (and maybe the address) changes.
//
//   bit  field          bit  field          bit  field
//   0    time_ns        6    tid            12   device_free
//   1    address        7    device         13   device_total
//   2    size           8    result         14   flags
//   3    stack_id       9    actual_size    15   context
//   4    api            10   handle         16   stream
//   5    kind           11   offset
//
// A one-site cudaMalloc/cudaFree loop costs about 6 bytes per event, record framing
// included (tag, length, op, mask, time delta).
inline constexpr uint32_t kEventFields = 17;
inline constexpr uint32_t kOpSlots = 16; // Op values are below this

// The coder's memory: the previous event of each op. Writer and reader keep one each,
// across frames, and start from default-constructed events (all zero but device = -1).
struct EventCoder {
    Event prev[kOpSlots]{};
};

namespace detail {
template <typename F> void forEachEventField(Event& e, F&& f) {
    uint64_t api = static_cast<uint64_t>(e.api), kind = static_cast<uint64_t>(e.kind),
             stack = e.stack_id, tid = e.tid,
             device = static_cast<uint64_t>(static_cast<int64_t>(e.device)),
             result = static_cast<uint64_t>(static_cast<int64_t>(e.result)), flags = e.flags;
    f(0, e.time_ns);
    f(1, e.address);
    f(2, e.size);
    f(3, stack);
    f(4, api);
    f(5, kind);
    f(6, tid);
    f(7, device);
    f(8, result);
    f(9, e.actual_size);
    f(10, e.handle);
    f(11, e.offset);
    f(12, e.device_free);
    f(13, e.device_total);
    f(14, flags);
    f(15, e.context);
    f(16, e.stream);
    e.api = static_cast<Api>(api);
    e.kind = static_cast<Kind>(kind);
    e.stack_id = static_cast<uint32_t>(stack);
    e.tid = static_cast<uint32_t>(tid);
    e.device = static_cast<int16_t>(static_cast<int64_t>(device));
    e.result = static_cast<int32_t>(static_cast<int64_t>(result));
    e.flags = static_cast<uint32_t>(flags);
}
} // namespace detail

// The largest event body: op (1 byte), mask (3 bytes), 17 deltas of at most 10 bytes.
inline constexpr size_t kMaxEventBody = 1 + 3 + kEventFields * 10;
// The largest event record: tag, body length (2 bytes: the body is under 16 KiB), body.
inline constexpr size_t kMaxEventRecord = 1 + 2 + kMaxEventBody;

namespace detail {
// Unchecked LEB128 into a buffer the caller sized; returns the end.
inline uint8_t* putVarint(uint8_t* p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = static_cast<uint8_t>(v | 0x80);
        v >>= 7;
    }
    *p++ = static_cast<uint8_t>(v);
    return p;
}

inline uint8_t* putDelta(uint8_t* p, uint64_t cur, uint64_t prev) {
    const auto d = static_cast<int64_t>(cur - prev);
    return putVarint(p, (static_cast<uint64_t>(d) << 1) ^ static_cast<uint64_t>(d >> 63));
}
} // namespace detail

namespace detail {
// Which bytes of two Events differ: bit i of `lo` for byte i (0-63), bit i of `hi` for byte
// 64 + i (64-103).
struct ByteChanges {
    uint64_t lo;
    uint64_t hi;
};

#if defined(__SSE2__)
inline ByteChanges byteChanges(const uint8_t* a, const uint8_t* b) {
    auto neq = [&](int off) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + off));
        const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + off));
        return static_cast<uint64_t>(~_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) & 0xffff);
    };
    // The last 16-byte load starts at 88 (overlapping) so as not to read past byte 103.
    return {neq(0) | neq(16) << 16 | neq(32) << 32 | neq(48) << 48,
            neq(64) | neq(80) << 16 | (neq(88) >> 8) << 32};
}
#else
inline ByteChanges byteChanges(const uint8_t* a, const uint8_t* b) {
    ByteChanges c{0, 0};
    for (int i = 0; i < 104; ++i) {
        if (a[i] != b[i]) {
            (i < 64 ? c.lo : c.hi) |= uint64_t{1} << (i & 63);
        }
    }
    return c;
}
#endif

inline uint64_t word(const uint8_t* p, int i) {
    uint64_t v;
    std::memcpy(&v, p + 8 * i, 8);
    return v;
}

// Whether two Events agree from byte 24 on (everything but time, address and size).
#if defined(__SSE2__)
inline bool sameFromWord3(const uint8_t* a, const uint8_t* b) {
    auto eq = [&](int off) {
        return _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + off)),
                              _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + off)));
    };
    const __m128i all = _mm_and_si128(_mm_and_si128(eq(24), eq(40)),
                                      _mm_and_si128(_mm_and_si128(eq(56), eq(72)), eq(88)));
    return _mm_movemask_epi8(all) == 0xffff;
}
#else
inline bool sameFromWord3(const uint8_t* a, const uint8_t* b) {
    return std::memcmp(a + 24, b + 24, 80) == 0;
}
#endif
} // namespace detail

// Writes the event body (op, mask, deltas) of the Event stored at `event` (sizeof(Event)
// bytes, any alignment) to `out`, which has room for kMaxEventBody bytes; remembers the
// event in the coder and returns the body's size. The recorder's writer thread encodes
// every event through it, so it compares the two Events' bytes at once (the detail::
// byteChanges masks) and looks at single fields only where bytes differ; the common case,
// an event that differs from the previous of its op in time, address or size only, is
// recognised by one comparison of the other 80 bytes and coded without looking further. The bytes
// are exactly what the field walk of docs/trace-format.md gives
// (tests/analyzer/decoder_test.cpp checks that against a plain implementation).
inline size_t encodeEventBodyTo(uint8_t* out, const void* event, EventCoder& coder) {
    const auto* c = static_cast<const uint8_t*>(event);
    const uint8_t op = c[offsetof(Event, op)];
    auto* p = reinterpret_cast<uint8_t*>(&coder.prev[op % kOpSlots]);
    using detail::word;
    if (detail::sameFromWord3(c, p)) [[likely]] {
        // Only time, address and size may differ: what an allocation loop changes.
        const uint64_t mask = static_cast<uint64_t>(word(c, 0) != word(p, 0)) |
                              static_cast<uint64_t>(word(c, 1) != word(p, 1)) << 1 |
                              static_cast<uint64_t>(word(c, 2) != word(p, 2)) << 2;
        uint8_t* w = detail::putVarint(out, op);
        w = detail::putVarint(w, mask);
        for (int i = 0; i < 3; ++i) {
            if (mask & (uint64_t{1} << i)) {
                w = detail::putDelta(w, word(c, i), word(p, i));
            }
        }
        std::memcpy(p, c, 3 * sizeof(uint64_t)); // the rest is equal already
        return static_cast<size_t>(w - out);
    }
    const detail::ByteChanges ch = detail::byteChanges(c, p);
    // Field bits from the bytes that changed (layout: the asserts after this function).
    auto any = [](uint64_t bits, uint64_t m, int b) {
        return static_cast<uint64_t>((bits & m) != 0) << b;
    };
    const uint64_t mask = any(ch.lo, 0xff, 0) | any(ch.lo, 0xff00, 1) | any(ch.lo, 0xff0000, 2) |
                          any(ch.lo, 0xffull << 24, 9) | any(ch.lo, 0xffull << 32, 10) |
                          any(ch.lo, 0xffull << 40, 16) | any(ch.lo, 0xffull << 48, 15) |
                          any(ch.lo, 0xffull << 56, 11) | any(ch.hi, 0xff, 12) |
                          any(ch.hi, 0xff00, 13) | any(ch.hi, 0xfull << 16, 14) |
                          any(ch.hi, 0xfull << 20, 3) | any(ch.hi, 0xfull << 24, 6) |
                          any(ch.hi, 0xfull << 28, 8) | any(ch.hi, 0x3ull << 32, 7) |
                          any(ch.hi, 0x1ull << 35, 4) | any(ch.hi, 0x1ull << 36, 5);
    uint8_t* w = detail::putVarint(out, op);
    w = detail::putVarint(w, mask);
    auto u32 = [](uint64_t v, int shift) {
        return static_cast<uint64_t>(static_cast<uint32_t>(v >> shift));
    };
    auto u8 = [](uint64_t v, int shift) { return (v >> shift) & 0xff; };
    for (uint64_t m = mask; m != 0; m &= m - 1) {
        switch (__builtin_ctzll(m)) {
        case 0:
            w = detail::putDelta(w, word(c, 0), word(p, 0));
            break;
        case 1:
            w = detail::putDelta(w, word(c, 1), word(p, 1));
            break;
        case 2:
            w = detail::putDelta(w, word(c, 2), word(p, 2));
            break;
        case 3:
            w = detail::putDelta(w, u32(word(c, 10), 32), u32(word(p, 10), 32));
            break;
        case 4:
            w = detail::putDelta(w, u8(word(c, 12), 24), u8(word(p, 12), 24));
            break;
        case 5:
            w = detail::putDelta(w, u8(word(c, 12), 32), u8(word(p, 12), 32));
            break;
        case 6:
            w = detail::putDelta(w, u32(word(c, 11), 0), u32(word(p, 11), 0));
            break;
        case 7: // device: sign-extended
            w = detail::putDelta(w, static_cast<uint64_t>(static_cast<int16_t>(word(c, 12))),
                                 static_cast<uint64_t>(static_cast<int16_t>(word(p, 12))));
            break;
        case 8: // result: sign-extended
            w = detail::putDelta(w, static_cast<uint64_t>(static_cast<int32_t>(word(c, 11) >> 32)),
                                 static_cast<uint64_t>(static_cast<int32_t>(word(p, 11) >> 32)));
            break;
        case 9:
            w = detail::putDelta(w, word(c, 3), word(p, 3));
            break;
        case 10:
            w = detail::putDelta(w, word(c, 4), word(p, 4));
            break;
        case 11:
            w = detail::putDelta(w, word(c, 7), word(p, 7));
            break;
        case 12:
            w = detail::putDelta(w, word(c, 8), word(p, 8));
            break;
        case 13:
            w = detail::putDelta(w, word(c, 9), word(p, 9));
            break;
        case 14:
            w = detail::putDelta(w, u32(word(c, 10), 0), u32(word(p, 10), 0));
            break;
        case 15:
            w = detail::putDelta(w, word(c, 6), word(p, 6));
            break;
        default: // 16
            w = detail::putDelta(w, word(c, 5), word(p, 5));
            break;
        }
    }
    std::memcpy(p, c, sizeof(Event));
    return static_cast<size_t>(w - out);
}

// The same, appended to a writer.
inline void encodeEventBody(ByteWriter& w, const Event& e, EventCoder& coder) {
    uint8_t body[kMaxEventBody];
    w.bytes(body, encodeEventBodyTo(body, &e, coder));
}

// Writes a whole event record (tag, body length, body) of the Event stored at `event` to
// `out`, which has room for kMaxEventRecord bytes; returns its size.
inline size_t encodeEventRecordTo(uint8_t* out, const void* event, EventCoder& coder) {
    out[0] = static_cast<uint8_t>(RecordTag::Event);
    size_t n = encodeEventBodyTo(out + 2, event, coder);
    if (n < 0x80) [[likely]] {
        out[1] = static_cast<uint8_t>(n);
        return 2 + n;
    }
    std::memmove(out + 3, out + 2, n);
    out[1] = static_cast<uint8_t>(n | 0x80);
    out[2] = static_cast<uint8_t>(n >> 7);
    return 3 + n;
}

namespace detail {
// The Event as 13 little-endian words, so that a decode reads and writes whole words:
// narrow field stores followed by a wide copy of the struct stall on store forwarding.
static_assert(sizeof(Event) == 13 * 8);
static_assert(offsetof(Event, actual_size) == 3 * 8);
static_assert(offsetof(Event, handle) == 4 * 8);
static_assert(offsetof(Event, stream) == 5 * 8);
static_assert(offsetof(Event, context) == 6 * 8);
static_assert(offsetof(Event, offset) == 7 * 8);
static_assert(offsetof(Event, device_free) == 8 * 8);
static_assert(offsetof(Event, device_total) == 9 * 8);
static_assert(offsetof(Event, flags) == 10 * 8);
static_assert(offsetof(Event, stack_id) == 10 * 8 + 4);
static_assert(offsetof(Event, tid) == 11 * 8);
static_assert(offsetof(Event, result) == 11 * 8 + 4);
static_assert(offsetof(Event, device) == 12 * 8);
static_assert(offsetof(Event, op) == 12 * 8 + 2);
static_assert(offsetof(Event, api) == 12 * 8 + 3);
static_assert(offsetof(Event, kind) == 12 * 8 + 4);

} // namespace detail

// How decodeEventBody writes a decoded word (`i`: 0 to 12) into the caller's event: a plain
// store. A reader whose events another thread reads may write around the cache instead
// (analyzer/read/event_stores.h).
struct PlainWordStore {
    void operator()(unsigned char* event, int i, uint64_t word) const {
        std::memcpy(event + 8 * i, &word, 8);
    }
};

namespace detail {

// What decodeEventBodyAs found.
enum class BodyRead : uint8_t { Ok, Malformed, LongVarint };

// The bytes decodeEventBodyAs<false> may load from a body's start: the op, the mask and
// every field, each a varint of at most 8 bytes read with one 8-byte load.
inline constexpr size_t kUncheckedBodyBytes = (2 + kEventFields) * 8;

// A varint of an event body: checked against the body's end (readVarint), or not
// (readVarintUnbounded).
template <bool checked>
[[gnu::always_inline]] inline bool
readBodyVarint(const uint8_t*& p, [[maybe_unused]] const uint8_t* end,
               [[maybe_unused]] const uint8_t* readable, uint64_t& v) {
    if constexpr (checked) {
        return readVarint(p, end, readable, v);
    } else {
        return readVarintUnbounded(p, v);
    }
}

// decodeEventBody's work. `checked`: every varint is checked against the body's end as it is
// read (readVarint). Unchecked, where at least kUncheckedBodyBytes may be loaded: varints of
// up to 8 bytes are read with no bound at all (readVarintUnbounded), and the position is
// compared with the end once, after the last field and before anything is stored: the
// position only grows, so it is within the end then exactly when every varint was, and each
// was read as the checked path reads it. A longer varint (LongVarint) leaves the decoding to
// the checked path.
template <bool checked, typename WordStore>
[[gnu::always_inline]] inline BodyRead decodeEventBodyAs(const uint8_t* p, const uint8_t* end,
                                                         const uint8_t* readable, Event& out,
                                                         EventCoder& coder, WordStore put) {
    // A varint that cannot be read: past the body's end (checked), or longer than 8 bytes
    // (unchecked: the checked path reads it).
    constexpr BodyRead kUnread = checked ? BodyRead::Malformed : BodyRead::LongVarint;
    uint64_t op = 0, mask = 0;
    if (!readBodyVarint<checked>(p, end, readable, op) ||
        !readBodyVarint<checked>(p, end, readable, mask)) {
        return kUnread;
    }
    if (op == 0 || op >= kOpSlots || mask >> kEventFields) {
        return BodyRead::Malformed;
    }
    // Words in registers, loaded and stored one word at a time: a spilled array copied out
    // with 16-byte moves right after 8-byte stores stalls on store forwarding. Only the
    // words the common case changes are loaded first: with all thirteen live at once, the
    // read position itself was spilled to the stack and reloaded for every field.
    auto* prev = reinterpret_cast<unsigned char*>(&coder.prev[op]);
    auto load = [prev](int i) {
        uint64_t x;
        std::memcpy(&x, prev + 8 * i, 8);
        return x;
    };
    uint64_t w0 = load(0), w1 = load(1), w2 = load(2), w10 = load(10), w12 = load(12);
    // Fields in mask-bit order (the order the deltas are stored); a repeating mask
    // predicts well, and nothing is touched for absent fields.
    uint64_t v = 0;
#define GMT_FIELD(bit, stmt)                                                                       \
    if (mask & (uint64_t{1} << bit)) {                                                             \
        if (!readBodyVarint<checked>(p, end, readable, v)) {                                       \
            return kUnread;                                                                        \
        }                                                                                          \
        v = unzigzag(v);                                                                           \
        stmt;                                                                                      \
    }
    uint64_t d3 = 0, d4 = 0, d5 = 0, d6 = 0, d7 = 0, d8 = 0, d14 = 0;
    GMT_FIELD(0, w0 += v) // time_ns
    GMT_FIELD(1, w1 += v) // address
    GMT_FIELD(2, w2 += v) // size
    GMT_FIELD(3, d3 = v)  // stack_id
    if (mask < 16) [[likely]] {
        if (!checked && p > end) {
            return BodyRead::Malformed; // a varint ran past the end
        }
        // What an allocation loop changes (time, address, size, stack), nothing else: the
        // other words are the previous event's, and only the changed ones go back to it.
        // `out` still takes all thirteen: a caller's memory may hold anything, and where
        // `put` writes around the cache (a decoding worker, analyzer/read/event_stores.h)
        // a line written in part costs a merge in memory; leaving the carried words out
        // there made a report 2.7x slower (docs/performance.md, "Bytes per decoded event").
        w10 = (w10 & 0xffffffffull) | static_cast<uint64_t>(static_cast<uint32_t>((w10 >> 32) + d3))
                                          << 32;
        w12 = (w12 & ~0xff0000ull) | op << 16;
        auto* o = reinterpret_cast<unsigned char*>(&out);
        put(o, 0, w0);
        put(o, 1, w1);
        put(o, 2, w2);
        put(o, 3, load(3));
        put(o, 4, load(4));
        put(o, 5, load(5));
        put(o, 6, load(6));
        put(o, 7, load(7));
        put(o, 8, load(8));
        put(o, 9, load(9));
        put(o, 10, w10);
        put(o, 11, load(11));
        put(o, 12, w12);
        const PlainWordStore keep;
        keep(prev, 0, w0);
        keep(prev, 1, w1);
        keep(prev, 2, w2);
        keep(prev, 10, w10);
        keep(prev, 12, w12);
        return BodyRead::Ok;
    }
    uint64_t w3 = load(3), w4 = load(4), w5 = load(5), w6 = load(6), w7 = load(7), w8 = load(8),
             w9 = load(9), w11 = load(11);
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
    if (!checked && p > end) {
        return BodyRead::Malformed;
    }
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
    auto store = [prev, o, &put](int i, uint64_t x) {
        std::memcpy(prev + 8 * i, &x, 8);
        put(o, i, x);
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
    return BodyRead::Ok;
}

template <typename WordStore>
[[gnu::noinline]] bool decodeEventBodyChecked(const uint8_t* p, const uint8_t* end,
                                              const uint8_t* readable, Event& out,
                                              EventCoder& coder, WordStore put) {
    return decodeEventBodyAs<true>(p, end, readable, out, coder, put) == BodyRead::Ok;
}

} // namespace detail

// Decodes an event body (op, mask, deltas) with the coder (updated): the inverse of
// encodeEventBody. Every field is the previous event's (of the same op) plus a zigzag delta,
// added with wrap-around in the field's own width. On malformed input it returns false and
// neither `out` nor the coder changes. Written for speed, since the analyzer decodes every
// event of a trace through it; tests/analyzer/decoder_test.cpp checks it against a plain
// field-by-field walk. The body is [p, end); memory up to `readable` (at or after `end`:
// the rest of the frame, say) may be loaded, never used, so that varints near the body's
// end still take readVarint's 8-byte load; where enough may be loaded, the varints of one body
// are read with no test of its end but one (detail::decodeEventBodyAs). `out` is written whole
// words at a time, through `put` (PlainWordStore: plain stores).
template <typename WordStore = PlainWordStore>
inline bool decodeEventBody(const uint8_t* p, const uint8_t* end, const uint8_t* readable,
                            Event& out, EventCoder& coder, WordStore put = {}) {
    if (static_cast<size_t>(readable - p) >= detail::kUncheckedBodyBytes) [[likely]] {
        const detail::BodyRead r =
            detail::decodeEventBodyAs<false>(p, end, readable, out, coder, put);
        if (r != detail::BodyRead::LongVarint) [[likely]] {
            return r == detail::BodyRead::Ok;
        }
    }
    return detail::decodeEventBodyChecked(p, end, readable, out, coder, put);
}

inline bool decodeEventBody(const uint8_t* p, const uint8_t* end, Event& out, EventCoder& coder) {
    return decodeEventBody(p, end, end, out, coder);
}

inline bool decodeEventBody(ByteReader& r, Event& out, EventCoder& coder) {
    auto body = r.bytes(r.remaining());
    return decodeEventBody(body.data(), body.data() + body.size(), out, coder);
}

} // namespace gmt::format
