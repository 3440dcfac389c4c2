#include "export/pickle_writer.h"

namespace gmt::analyzer {

namespace {

void littleEndian(unsigned char* out, uint64_t v, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        out[i] = static_cast<unsigned char>(v >> (8 * i));
    }
}

} // namespace

void PickleWriter::string(std::string_view utf8) {
    unsigned char header[5];
    if (utf8.size() < 256) {
        out_.put('\x8c'); // SHORT_BINUNICODE
        out_.put(static_cast<char>(utf8.size()));
    } else {
        // BINUNICODE takes 4 GiB; a longer string (never seen in a snapshot) is cut.
        if (utf8.size() > 0xffffffffu) {
            utf8 = utf8.substr(0, 0xffffffffu);
        }
        header[0] = 'X';
        littleEndian(header + 1, utf8.size(), 4);
        out_.write(std::string_view(reinterpret_cast<const char*>(header), 5));
    }
    out_.write(utf8);
}

void PickleWriter::integer(int64_t value) {
    if (value >= 0 && value < 256) {
        op2('K', static_cast<char>(value)); // BININT1
        return;
    }
    if (value >= INT32_MIN && value <= INT32_MAX) {
        unsigned char bytes[5] = {'J'}; // BININT: 4 bytes, signed
        littleEndian(bytes + 1, static_cast<uint64_t>(value), 4);
        out_.write(std::string_view(reinterpret_cast<const char*>(bytes), 5));
        return;
    }
    unsigned char bytes[8];
    littleEndian(bytes, static_cast<uint64_t>(value), 8);
    longInteger(bytes, 8);
}

void PickleWriter::unsignedInteger(uint64_t value) {
    if (value <= static_cast<uint64_t>(INT64_MAX)) {
        integer(static_cast<int64_t>(value));
        return;
    }
    // LONG1 is two's complement: a value with its top bit set needs a ninth, zero byte.
    unsigned char bytes[9];
    littleEndian(bytes, value, 8);
    bytes[8] = 0;
    longInteger(bytes, 9);
}

void PickleWriter::longInteger(const unsigned char* le_bytes, size_t n) {
    // LONG1: the shortest two's-complement form, so readers see the usual encoding.
    while (n > 1 && ((le_bytes[n - 1] == 0 && !(le_bytes[n - 2] & 0x80)) ||
                     (le_bytes[n - 1] == 0xff && (le_bytes[n - 2] & 0x80)))) {
        --n;
    }
    op2('\x8a', static_cast<char>(n));
    out_.write(std::string_view(reinterpret_cast<const char*>(le_bytes), n));
}

void PickleWriter::put(uint32_t memo) {
    if (memo < 256) {
        op2('q', static_cast<char>(memo)); // BINPUT
        return;
    }
    unsigned char bytes[5] = {'r'}; // LONG_BINPUT
    littleEndian(bytes + 1, memo, 4);
    out_.write(std::string_view(reinterpret_cast<const char*>(bytes), 5));
}

void PickleWriter::get(uint32_t memo) {
    if (memo < 256) {
        op2('h', static_cast<char>(memo)); // BINGET
        return;
    }
    unsigned char bytes[5] = {'j'}; // LONG_BINGET
    littleEndian(bytes + 1, memo, 4);
    out_.write(std::string_view(reinterpret_cast<const char*>(bytes), 5));
}

} // namespace gmt::analyzer
