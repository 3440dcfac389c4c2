// The varint reader's word path (format::detail::readVarint: the length from the stop bits
// of one 8-byte load) against the byte-at-a-time reader it replaces
// (format::detail::readVarintBytes): every length, canonical or overlong or too long, at
// every position near the end of the bytes it may use and of those it may load, with
// continuation bytes after it that a misread length would take in.
#include <gpumemtrace/format/byte_coding.h>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstring>
#include <random>
#include <vector>

using namespace gmt;

namespace {

// LEB128 of `v` in exactly `length` bytes (padded with continuation bytes of zero bits when
// longer than needed: overlong, which the reader accepts up to 10 bytes), or with its last
// byte's stop bit set too (`unterminated`: a varint that never ends).
std::vector<uint8_t> encode(uint64_t v, size_t length, bool unterminated = false) {
    std::vector<uint8_t> out;
    for (size_t i = 0; i < length; ++i) {
        const bool last = i + 1 == length;
        out.push_back(static_cast<uint8_t>((v & 0x7f) | (last && !unterminated ? 0 : 0x80)));
        v >>= 7;
    }
    return out;
}

// The byte sequences to read: values of every length 1-10 (the least and the largest of
// each, random ones), the same values overlong, 10-byte varints with bits past 64, and
// sequences of 8 to 12 bytes that never stop.
std::vector<std::vector<uint8_t>> samples(std::mt19937_64& rng) {
    std::vector<std::vector<uint8_t>> s;
    for (size_t length = 1; length <= 10; ++length) {
        const unsigned bits = static_cast<unsigned>(7 * length);
        const uint64_t least = length == 1 ? 0 : uint64_t{1} << (7 * (length - 1));
        const uint64_t most = bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
        std::vector<uint64_t> values{least, most};
        for (int i = 0; i < 6; ++i) {
            values.push_back(least + rng() % (most - least + (most == ~uint64_t{0} ? 0 : 1)));
        }
        for (uint64_t v : values) {
            size_t needed = 1;
            for (uint64_t x = v; x >= 0x80; x >>= 7) {
                ++needed;
            }
            s.push_back(encode(v, needed));
            for (size_t longer = needed + 1; longer <= 11; ++longer) {
                s.push_back(encode(v, longer)); // overlong: 11 bytes is one too many
            }
        }
    }
    s.push_back({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}); // bits past 64
    s.push_back({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02});
    for (size_t length = 8; length <= 12; ++length) {
        s.push_back(encode(rng(), length, true));
    }
    return s;
}

struct Read {
    bool ok;
    uint64_t value;
    ptrdiff_t advanced;
};

} // namespace

TEST_CASE("format varints: the 8-byte load reads what the byte loop reads, near any end") {
    std::mt19937_64 rng(20261202);
    const auto all = samples(rng);
    constexpr size_t kBuffer = 32;
    size_t word_reads = 0, checked = 0;
    for (const auto& bytes : all) {
        // The varint at `pos`; the bytes it may use end at `end` (cutting it short when
        // before its last byte), those it may load at `readable`; every combination where
        // the varint's bytes and 8 more fit in the buffer's last bytes.
        for (size_t pos = 0; pos + bytes.size() <= kBuffer; ++pos) {
            uint8_t buf[kBuffer];
            for (auto& b : buf) {
                // Continuation bytes lengthen a misread varint; others end it early.
                b = static_cast<uint8_t>(rng() % 4 ? 0x80 | rng() : rng());
            }
            std::memcpy(buf + pos, bytes.data(), bytes.size());
            for (size_t end = pos; end <= kBuffer && end <= pos + bytes.size() + 1; ++end) {
                for (size_t readable = end; readable <= kBuffer; ++readable) {
                    if (readable - pos > bytes.size() + 9) {
                        break; // farther ends change nothing: 8 bytes are loaded at most
                    }
                    const uint8_t* p = buf + pos;
                    const uint8_t* q = buf + pos;
                    uint64_t vp = ~uint64_t{0}, vq = ~uint64_t{0};
                    const Read fast{format::detail::readVarint(p, buf + end, buf + readable, vp),
                                    vp, p - (buf + pos)};
                    const Read slow{format::detail::readVarintBytes(q, buf + end, vq), vq,
                                    q - (buf + pos)};
                    INFO("length " << bytes.size() << " pos " << pos << " end " << end
                                   << " readable " << readable);
                    REQUIRE(fast.ok == slow.ok);
                    REQUIRE(fast.advanced == slow.advanced);
                    if (slow.ok) {
                        REQUIRE(fast.value == slow.value);
                    }
                    if (readable - pos >= 8 && bytes[0] >= 0x80) {
                        ++word_reads;
                    }
                    ++checked;
                }
            }
        }
    }
    // The word path was taken, often, with every outcome among the cases above.
    REQUIRE(word_reads > checked / 4);
}

TEST_CASE("format varints: ByteReader reads a run of varints as the byte loop does") {
    // Varints back to back, the last ones in the span's last 8 bytes (which the reader may
    // not load past): the same values, then the same failure where the bytes run out.
    std::mt19937_64 rng(7);
    const auto all = samples(rng);
    for (int round = 0; round < 2000; ++round) {
        std::vector<uint8_t> bytes;
        const int n = 1 + static_cast<int>(rng() % 12);
        for (int i = 0; i < n; ++i) {
            const auto& v = all[rng() % all.size()];
            bytes.insert(bytes.end(), v.begin(), v.end());
        }
        const size_t cut = rng() % 3; // sometimes inside the last one
        if (cut < bytes.size()) {
            bytes.resize(bytes.size() - cut);
        }
        format::ByteReader r(bytes);
        const uint8_t* q = bytes.data();
        const uint8_t* end = bytes.data() + bytes.size();
        while (r.ok() && !r.atEnd()) {
            uint64_t expected = 0;
            const bool ok = format::detail::readVarintBytes(q, end, expected);
            const uint64_t got = r.varint();
            REQUIRE(r.ok() == ok);
            if (ok) {
                REQUIRE(got == expected);
                REQUIRE(r.remaining() == static_cast<size_t>(end - q));
            }
        }
    }
}
