// Byte-level coding: LEB128 varints, zigzag, strings, into and out of bounded buffers.
// The writer appends into a caller-owned buffer (no allocation on the recording side);
// the reader decodes from a bounded span and reports overruns instead of reading past
// the end. Every record body is built from these (event_codec.h, record_codec.h).
#pragma once

#include <gpumemtrace/format/record_limits.h>

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
// A varint (at most 10 bytes, bits past 64 dropped) from [p, end), advancing p. False when it runs
// past `end` or is longer than 10 bytes. (A branch-free 8-byte-load variant measured slower: field
// lengths repeat per op, so the byte loop predicts well.)
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
    uint64_t varint() {
        uint64_t v = 0;
        if (!ok_ || !detail::readVarint(cur_, end_, v)) {
            ok_ = false; // ran past the end, or longer than any varint we write
            cur_ = end_;
            return 0;
        }
        return v;
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
    const uint8_t* cur_;
    const uint8_t* end_;
    bool ok_ = true;
};

} // namespace gmt::format
