// Events decoded before the delta state they depend on is known. An event's fields are
// its op's previous event's plus deltas (docs/trace-format.md, "Event delta coding"),
// across frames; each field adds in its own width, so a run of frames decoded from an
// all-zero state holds, field by field, the sum of its deltas, and adding the true state
// before the run afterwards gives exactly what decoding in order would have. This is what
// lets frames be decoded in parallel, before the frames ahead of them are.
#pragma once

#include <gpumemtrace/format/event_codec.h>

#include <cstdint>
#include <cstring>

namespace gmt::analyzer {

// The state to decode a run of frames from when the state before it is not known yet.
inline format::EventCoder zeroCoder() {
    format::EventCoder c;
    std::memset(static_cast<void*>(&c), 0, sizeof c);
    return c;
}

// `local` decoded from zeroCoder(), `base` the true previous event of its op: `local`
// becomes what decoding from `base` would have given. Also turns the zero-based state
// after a run into the true one (an op the run never had keeps `base`: its sums are 0).
inline void rebaseEvent(format::Event& local, const format::Event& base) {
    // The layout as 13 words (static_asserts in trace_format.h, detail:: near
    // decodeEventBody); fields narrower than a word wrap in their own width.
    uint64_t l[13], b[13];
    std::memcpy(l, &local, sizeof l);
    std::memcpy(b, &base, sizeof b);
    for (int i = 0; i < 10; ++i) {
        l[i] += b[i]; // the 64-bit fields
    }
    auto add32 = [](uint64_t x, uint64_t y) {
        const uint64_t lo = static_cast<uint32_t>(x + y);
        const uint64_t hi = static_cast<uint32_t>((x >> 32) + (y >> 32));
        return lo | hi << 32;
    };
    l[10] = add32(l[10], b[10]); // flags, stack_id
    l[11] = add32(l[11], b[11]); // tid, result
    // device (16 bits), op (kept: the event's own, or the base's where the run had none of
    // it), api and kind (8 bits each), reserved (the base's: always zero).
    const uint64_t x = l[12], y = b[12];
    const uint64_t device = static_cast<uint16_t>(x + y);
    const uint64_t op = (x >> 16) & 0xff ? (x >> 16) & 0xff : (y >> 16) & 0xff;
    const uint64_t api = static_cast<uint8_t>((x >> 24) + (y >> 24));
    const uint64_t kind = static_cast<uint8_t>((x >> 32) + (y >> 32));
    l[12] = (y & 0xffffff0000000000ull) | kind << 32 | api << 24 | op << 16 | device;
    std::memcpy(&local, l, sizeof l);
}

inline void rebaseCoder(format::EventCoder& local, const format::EventCoder& base) {
    for (size_t op = 0; op < format::kOpSlots; ++op) {
        rebaseEvent(local.prev[op], base.prev[op]);
    }
}

} // namespace gmt::analyzer
