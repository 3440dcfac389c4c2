// Hexadecimal as the analyzer writes it everywhere (text, JSON, exports, dump): addresses,
// handles and streams as "0x" and lower-case digits without leading zeros ("0x0" for zero),
// and raw bytes (build ids, line tables) as two digits each. JSON carries addresses as
// these strings: numbers lose precision past 2^53 in most consumers.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gmt::analyzer {

// The most characters hexAt() writes: "0x" and 16 digits.
inline constexpr size_t kMaxHexChars = 18;

// Writes "0x..." at `out` (room for kMaxHexChars) and returns its end: for the exports'
// own buffers, without a string per value.
inline char* hexAt(char* out, uint64_t value) {
    *out++ = '0';
    *out++ = 'x';
    return std::to_chars(out, out + 16, value, 16).ptr;
}

inline void appendHex(std::string& out, uint64_t value) {
    char digits[kMaxHexChars];
    out.append(digits, hexAt(digits, value));
}

// A value's "0x..." text in a buffer of its own, read as a string_view: for a writer that
// takes one, without a string allocated per value (most addresses need more characters
// than a std::string holds without one).
class HexText {
  public:
    explicit HexText(uint64_t value)
        : size_(static_cast<size_t>(hexAt(digits_, value) - digits_)) {}
    std::string_view view() const { return {digits_, size_}; }

  private:
    char digits_[kMaxHexChars];
    size_t size_;
};

inline std::string hex(uint64_t value) {
    std::string out;
    appendHex(out, value);
    return out;
}

inline std::string bytesHex(std::string_view bytes) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (const char c : bytes) {
        const auto byte = static_cast<unsigned char>(c);
        out.push_back(kDigits[byte >> 4]);
        out.push_back(kDigits[byte & 0xf]);
    }
    return out;
}

} // namespace gmt::analyzer
