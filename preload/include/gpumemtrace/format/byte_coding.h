// Byte-level coding: LEB128 varints, zigzag, strings, into and out of bounded buffers.
// The writer appends into a caller-owned buffer (no allocation on the recording side);
// the reader decodes from a bounded span and reports overruns instead of reading past
// the end. Every record body is built from these (event_codec.h, record_codec.h).
#pragma once

#include <gpumemtrace/format/record_limits.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

namespace gmt::format {

class ByteWriter {
  public:
    ByteWriter(uint8_t* buffer, size_t capacity)
        : begin_(buffer), cur_(buffer), end_(buffer + capacity) {}

    bool ok() const { return ok_; }
    size_t size() const { return static_cast<size_t>(cur_ - begin_); }
    uint8_t* data() const { return begin_; }

    void byte(uint8_t b) {
        if (cur_ == end_) {
            ok_ = false;
            return;
        }
        *cur_++ = b;
    }
    void varint(uint64_t v) {
        while (v >= 0x80) {
            byte(static_cast<uint8_t>(v | 0x80));
            v >>= 7;
        }
        byte(static_cast<uint8_t>(v));
    }
    void svarint(int64_t v) {
        varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
    }
    void bytes(const void* p, size_t n) {
        if (static_cast<size_t>(end_ - cur_) < n) {
            ok_ = false;
            return;
        }
        if (n == 0) {
            return; // p may be null (an empty vector's data()); memcpy must not see it
        }
        std::memcpy(cur_, p, n);
        cur_ += n;
    }
    void string(std::string_view s) {
        varint(s.size());
        bytes(s.data(), s.size());
    }

  private:
    uint8_t* begin_;
    uint8_t* cur_;
    uint8_t* end_;
    bool ok_ = true;
};

namespace detail {
// A varint (at most 10 bytes, bits past 64 dropped) from [p, end), advancing p, one byte at a
// time. False when it runs past `end` or is longer than 10 bytes. The reference for
// readVarint's word path, and what reads a buffer's last bytes.
inline bool readVarintBytes(const uint8_t*& p, const uint8_t* end, uint64_t& out) {
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

// The low seven bits of the first `n` bytes of `x`, packed: the value of an n-byte varint
// loaded as a little-endian word.
template <int n> [[gnu::always_inline]] inline uint64_t varintValue(uint64_t x) {
    x &= 0x7f7f7f7f7f7f7f7full & (~uint64_t{0} >> (64 - 8 * n));
    // Pairs of bytes into 14 bits, then 28, then 56.
    x = (x & 0x007f007f007f007full) | (x & 0x7f007f007f007f00ull) >> 1;
    x = (x & 0x00003fff00003fffull) | (x & 0x3fff00003fff0000ull) >> 2;
    x = (x & 0x000000000fffffffull) | (x & 0x0fffffff00000000ull) >> 4;
    return x;
}

// The varint starting at the 8 bytes `p` points to, when one of them ends it: its length
// (1-8) from the stop bits of one load, its value from those bytes gathered into place.
// 0 when all 8 bytes carry the continuation bit (a varint of 9 or 10 bytes, or one longer
// than any varint: readVarintBytes reads those). The length is found by a test per byte
// rather than computed from the word (a count of trailing zeros): a branch the processor
// predicts lets the next read start before this load arrives, where a length computed
// from the loaded bytes makes every read of an event wait for the one before (measured
// slower than the plain byte loop).
[[gnu::always_inline]] inline size_t varintInWord(const uint8_t* p, uint64_t& out) {
    static_assert(std::endian::native == std::endian::little, "the word path reads byte 0 low");
    uint64_t x;
    std::memcpy(&x, p, 8);
#define GMT_VARINT_ENDS_AT(n)                                                                      \
    if (!(x & (uint64_t{0x80} << (8 * (n - 1))))) {                                                \
        out = varintValue<n>(x);                                                                   \
        return n;                                                                                  \
    }
    GMT_VARINT_ENDS_AT(1)
    GMT_VARINT_ENDS_AT(2)
    GMT_VARINT_ENDS_AT(3)
    GMT_VARINT_ENDS_AT(4)
    GMT_VARINT_ENDS_AT(5)
    GMT_VARINT_ENDS_AT(6)
    GMT_VARINT_ENDS_AT(7)
    GMT_VARINT_ENDS_AT(8)
#undef GMT_VARINT_ENDS_AT
    return 0;
}

// readVarintBytes out of line, for the cases readVarint's inlined paths leave: a varint
// near the end of the readable bytes, or longer than 8 bytes. It takes and returns the
// position by value, so that a caller's position and value stay in registers.
struct VarintRead {
    const uint8_t* next;
    uint64_t value;
    bool ok;
};
[[gnu::noinline]] inline VarintRead readVarintTail(const uint8_t* p, const uint8_t* end) {
    uint64_t v = 0;
    const bool ok = readVarintBytes(p, end, v);
    return {p, v, ok};
}

// A varint from [p, end) as readVarintBytes reads it (same value, same length, same failures),
// advancing p; `readable` (at or after `end`) is where the memory the caller may load from
// ends. With at least 8 readable bytes at p, one 8-byte load gives the length (its stop
// bits) and the value (varintInWord) instead of a load, shift and or per byte; a varint
// that would end past `end` fails there, as it does byte by byte. One-byte varints (ops,
// masks, lengths) take a test of the first byte. Inlined where it is called: each call is
// a few instructions on its common paths.
[[gnu::always_inline]] inline bool readVarint(const uint8_t*& p, const uint8_t* end,
                                              const uint8_t* readable, uint64_t& out) {
    if (p != end && *p < 0x80) [[likely]] {
        out = *p++;
        return true;
    }
    if (readable - p >= 8) [[likely]] {
        uint64_t v;
        const size_t n = varintInWord(p, v);
        if (n != 0) [[likely]] {
            if (static_cast<size_t>(end - p) < n) {
                p = end; // where the byte loop stops: it ran out of bytes
                return false;
            }
            p += n;
            out = v;
            return true;
        }
    }
    const VarintRead r = readVarintTail(p, end);
    p = r.next;
    if (r.ok) {
        out = r.value;
    }
    return r.ok;
}

// A varint of at most 8 bytes at p, where 8 bytes may be loaded and nothing bounds it: its
// value in `out` and p past it; false (p unchanged) when all 8 carry the continuation bit.
// For a caller that checks, once, that its reads stayed within what it may use
// (decodeEventBody).
[[gnu::always_inline]] inline bool readVarintUnbounded(const uint8_t*& p, uint64_t& out) {
    if (*p < 0x80) [[likely]] {
        out = *p++;
        return true;
    }
    const size_t n = varintInWord(p, out);
    p += n;
    return n != 0;
}

// The same where the bytes that may be loaded end with those that may be used (a
// ByteReader's span). Inlined too: record framing reads a length per record through it.
[[gnu::always_inline]] inline bool readVarint(const uint8_t*& p, const uint8_t* end,
                                              uint64_t& out) {
    return readVarint(p, end, end, out);
}

inline uint64_t unzigzag(uint64_t v) {
    return (v >> 1) ^ (~(v & 1) + 1);
}

} // namespace detail

class ByteReader {
  public:
    explicit ByteReader(std::span<const uint8_t> data)
        : cur_(data.data()), end_(data.data() + data.size()) {}

    bool ok() const { return ok_; }
    bool atEnd() const { return cur_ == end_; }
    size_t remaining() const { return static_cast<size_t>(end_ - cur_); }

    uint8_t byte() {
        if (cur_ == end_) {
            ok_ = false;
            return 0;
        }
        return *cur_++;
    }
    // A varint of one byte is its own value, tested inline: every record's length is one
    // (a decoder read it through a call per event). Longer ones, and errors, out of line.
    uint64_t varint() {
        if (ok_ && cur_ != end_ && *cur_ < 0x80) [[likely]] {
            return *cur_++;
        }
        return varintRest();
    }
    int64_t svarint() { return static_cast<int64_t>(detail::unzigzag(varint())); }
    std::span<const uint8_t> bytes(size_t n) {
        if (remaining() < n) {
            ok_ = false;
            cur_ = end_;
            return {};
        }
        std::span<const uint8_t> s(cur_, n);
        cur_ += n;
        return s;
    }
    std::string string(size_t max_len = kMaxRecordSize) {
        uint64_t n = varint();
        if (!ok_ || n > max_len || n > remaining()) {
            ok_ = false;
            return {};
        }
        auto s = bytes(n);
        return std::string(reinterpret_cast<const char*>(s.data()), s.size());
    }

  private:
    [[gnu::noinline]] uint64_t varintRest() {
        uint64_t v = 0;
        if (!ok_ || !detail::readVarint(cur_, end_, v)) {
            ok_ = false; // ran past the end, or longer than any varint we write
            cur_ = end_;
            return 0;
        }
        return v;
    }

    const uint8_t* cur_;
    const uint8_t* end_;
    bool ok_ = true;
};

} // namespace gmt::format
