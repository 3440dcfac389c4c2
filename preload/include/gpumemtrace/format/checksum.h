// CRC-32C (Castagnoli): what frames and the prologue are checked with (file_layout.h),
// in hardware where the CPU has it. docs/trace-format.md, Checksum.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace gmt::format {

namespace detail {
// CRC-32C's polynomial, bit-reflected (bit 31 is x^0): what the table and the crc32
// instruction both divide by.
inline constexpr uint32_t kCrcPolynomial = 0x82f63b78u;

// The table-driven loop is the fallback for CPUs without the crc32 instruction.
constexpr std::array<uint32_t, 256> makeCrcTable() {
    std::array<uint32_t, 256> table{};
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) {
            c = (c & 1) ? (kCrcPolynomial ^ (c >> 1)) : (c >> 1);
        }
        table[i] = c;
    }
    return table;
}
inline constexpr std::array<uint32_t, 256> kCrcTable = makeCrcTable();

// a(x) * b(x) mod P, both bit-reflected. What a CRC register becomes when n zero bytes
// follow is that register times x^(8n) mod P: the product joins CRCs of adjacent pieces.
constexpr uint32_t multiplyModP(uint32_t a, uint32_t b) {
    uint32_t product = 0;
    for (uint32_t bit = 1u << 31; bit != 0; bit >>= 1) { // a's terms from x^0 up
        if (a & bit) {
            product ^= b;
        }
        b = (b & 1) ? (b >> 1) ^ kCrcPolynomial : b >> 1; // b *= x
    }
    return product;
}

// x^(8 * bytes) mod P, bit-reflected.
constexpr uint32_t zeroBytesFactor(size_t bytes) {
    uint32_t factor = 1u << 31; // x^0
    uint32_t square = 1u << 30; // x^1, then x^2, x^4, ...
    for (size_t bits = bytes * 8; bits != 0; bits >>= 1) {
        if (bits & 1) {
            factor = multiplyModP(factor, square);
        }
        square = multiplyModP(square, square);
    }
    return factor;
}

// A register moved past `bytes` zero bytes, one table per byte of the register: four
// lookups instead of multiplyModP's 32 steps.
struct ZeroBytesShift {
    std::array<std::array<uint32_t, 256>, 4> table{};
    explicit constexpr ZeroBytesShift(size_t bytes) {
        const uint32_t factor = zeroBytesFactor(bytes);
        for (uint32_t b = 0; b < 4; ++b) {
            for (uint32_t v = 0; v < 256; ++v) {
                table[b][v] = multiplyModP(v << (8 * b), factor);
            }
        }
    }
    constexpr uint32_t operator()(uint32_t crc) const {
        return table[0][crc & 0xff] ^ table[1][(crc >> 8) & 0xff] ^ table[2][(crc >> 16) & 0xff] ^
               table[3][crc >> 24];
    }
};

#if defined(__x86_64__)
// The SSE4.2 crc32 instruction computes the same CRC-32C, 8 bytes at a time: the table
// loop was a fifth of the analyzer's time on large traces. One instruction waits for the
// one before (3 cycles on current cores) but a core starts one every cycle, so a long
// buffer is taken in rounds of three pieces side by side, the second and third from a
// register of zero, their CRCs joined by shifting each past the pieces after it (two
// shifts of four lookups a round). Long rounds while they fit, then short ones: a frame
// of a few hundred bytes still gets one.
template <size_t Stride> inline constexpr ZeroBytesShift kCrcStrideShift{Stride};

template <size_t Stride>
__attribute__((target("sse4.2"))) inline uint64_t crc32cRounds(const uint8_t*& p, size_t& size,
                                                               uint64_t c) {
    for (; size >= 3 * Stride; size -= 3 * Stride, p += 3 * Stride) {
        uint64_t c1 = 0, c2 = 0;
        for (size_t i = 0; i < Stride; i += 8) {
            uint64_t v0, v1, v2;
            std::memcpy(&v0, p + i, 8);
            std::memcpy(&v1, p + Stride + i, 8);
            std::memcpy(&v2, p + 2 * Stride + i, 8);
            c = __builtin_ia32_crc32di(c, v0);
            c1 = __builtin_ia32_crc32di(c1, v1);
            c2 = __builtin_ia32_crc32di(c2, v2);
        }
        const ZeroBytesShift& shift = kCrcStrideShift<Stride>;
        c = shift(shift(static_cast<uint32_t>(c)) ^ static_cast<uint32_t>(c1)) ^
            static_cast<uint32_t>(c2);
    }
    return c;
}

__attribute__((target("sse4.2"))) inline uint32_t crc32cHardware(const uint8_t* p, size_t size,
                                                                 uint32_t crc) {
    uint64_t c = crc32cRounds<1024>(p, size, crc);
    c = crc32cRounds<128>(p, size, c);
    for (; size >= 8; size -= 8, p += 8) {
        uint64_t v;
        std::memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
    }
    crc = static_cast<uint32_t>(c);
    for (; size > 0; --size) {
        crc = __builtin_ia32_crc32qi(crc, *p++);
    }
    return crc;
}

inline bool haveCrc32Instruction() {
    static const bool have = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("sse4.2") != 0;
    }();
    return have;
}
#endif
} // namespace detail

inline uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0) {
    auto* p = static_cast<const uint8_t*>(data);
    crc = ~crc;
#if defined(__x86_64__)
    if (detail::haveCrc32Instruction()) {
        return ~detail::crc32cHardware(p, size, crc);
    }
#endif
    for (size_t i = 0; i < size; ++i) {
        crc = detail::kCrcTable[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    }
    return ~crc;
}

} // namespace gmt::format
