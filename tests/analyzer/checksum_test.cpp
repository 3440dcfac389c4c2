// CRC-32C (format::crc32c) against its definition, one bit at a time: the published check
// values, every length around the three-piece rounds of the hardware path and the pieces'
// joins, at unaligned starts and from registers other than zero, and the join itself
// (format::detail::ZeroBytesShift) against zero bytes fed through the definition.
#include <gpumemtrace/format/checksum.h>

#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

using namespace gmt;

namespace {

// The register after `size` bytes, starting from `crc`, as the polynomial's definition
// says: no table, no instruction.
uint32_t bitwiseRegister(const uint8_t* p, size_t size, uint32_t crc) {
    for (size_t i = 0; i < size; ++i) {
        crc ^= p[i];
        for (int k = 0; k < 8; ++k) {
            crc = (crc & 1) ? (crc >> 1) ^ format::detail::kCrcPolynomial : crc >> 1;
        }
    }
    return crc;
}

uint32_t bitwiseCrc(const uint8_t* p, size_t size, uint32_t crc = 0) {
    return ~bitwiseRegister(p, size, ~crc);
}

std::vector<uint8_t> randomBytes(size_t size, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> out(size);
    for (auto& b : out) {
        b = static_cast<uint8_t>(rng());
    }
    return out;
}

} // namespace

TEST_CASE("crc32c gives the published check values") {
    constexpr std::string_view digits = "123456789";
    CHECK(format::crc32c(digits.data(), digits.size()) == 0xe3069283u);
    // RFC 3720 (iSCSI), B.4: 32 bytes of zeros, of ones, ascending and descending.
    std::vector<uint8_t> bytes(32, 0);
    CHECK(format::crc32c(bytes.data(), bytes.size()) == 0x8a9136aau);
    std::fill(bytes.begin(), bytes.end(), 0xff);
    CHECK(format::crc32c(bytes.data(), bytes.size()) == 0x62a8ab43u);
    for (size_t i = 0; i < bytes.size(); ++i) {
        bytes[i] = static_cast<uint8_t>(i);
    }
    CHECK(format::crc32c(bytes.data(), bytes.size()) == 0x46dd794eu);
    for (size_t i = 0; i < bytes.size(); ++i) {
        bytes[i] = static_cast<uint8_t>(31 - i);
    }
    CHECK(format::crc32c(bytes.data(), bytes.size()) == 0x113fdb5cu);
}

TEST_CASE("crc32c equals its definition at every length, start and register") {
    const std::vector<uint8_t> bytes = randomBytes(40000, 7);
    size_t compared = 0, differing = 0;
    // Every length through two long rounds (3 KiB each) and the short rounds (384 bytes)
    // after them, then sparser to 32 KiB: each round's end, each piece's, and the 8-byte
    // and single-byte tails after them.
    for (size_t size = 0; size < 32768; size += size < 6 * 1024 ? 1 : 61) {
        for (size_t start : {0, 1, 5}) {
            for (uint32_t crc : {0u, 0x9e3779b9u}) {
                ++compared;
                const uint8_t* p = bytes.data() + start;
                differing += format::crc32c(p, size, crc) != bitwiseCrc(p, size, crc);
            }
        }
    }
    INFO(compared << " compared");
    CHECK(differing == 0);
}

TEST_CASE("crc32c of a whole equals crc32c continued over its parts") {
    const std::vector<uint8_t> bytes = randomBytes(12000, 11);
    for (size_t cut : {0, 1, 7, 8, 1535, 1536, 1537, 4000, 11999, 12000}) {
        const uint32_t head = format::crc32c(bytes.data(), cut);
        CHECK(format::crc32c(bytes.data() + cut, bytes.size() - cut, head) ==
              format::crc32c(bytes.data(), bytes.size()));
    }
}

TEST_CASE("a register shifted past zero bytes equals those bytes fed through the definition") {
    std::mt19937 rng(3);
    for (size_t zeros : {0, 1, 3, 8, 64, 512, 1000, 4096}) {
        const format::detail::ZeroBytesShift shift(zeros);
        const std::vector<uint8_t> zero_bytes(zeros, 0);
        for (int i = 0; i < 64; ++i) {
            const uint32_t reg = i < 32 ? 1u << i : static_cast<uint32_t>(rng());
            CHECK(shift(reg) == bitwiseRegister(zero_bytes.data(), zeros, reg));
        }
    }
}
