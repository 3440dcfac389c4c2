#include "objects.h"

#include "plain_load.h"

#include <cstring>

namespace gmt::preload::python {
namespace {

struct StrData {
    uintptr_t data = 0;
    uint32_t kind = 1; // bytes per character
    size_t length = 0; // characters
};

// PyASCIIObject.state: interned (2 bits), kind (3), compact (1), ascii (1), then ready (1)
// before 3.12. Kinds are 1, 2 and 4 (bytes per character).
bool strData(const Interpreter& in, uintptr_t object, StrData& out) {
    const Layout& l = in.layout;
    if (object == 0 || load<uintptr_t>(object + l.object_type) != in.str_type) {
        return false;
    }
    const uint32_t state = load<uint32_t>(object + l.str_state);
    const uint32_t kind = (state >> 2) & 7;
    const bool compact = (state >> 5) & 1;
    const bool ascii = (state >> 6) & 1;
    const bool ready = (l.version >> 16) >= 0x030c || ((state >> 7) & 1);
    const int64_t length = load<int64_t>(object + l.str_length);
    if (!ready || (kind != 1 && kind != 2 && kind != 4) || length < 0) {
        return false;
    }
    out.kind = kind;
    out.length = static_cast<size_t>(length);
    if (compact) {
        out.data = object + (ascii ? l.str_ascii_size : l.str_compact_size);
    } else {
        out.data = load<uintptr_t>(object + l.str_compact_size); // PyUnicodeObject.data.any
    }
    return out.data != 0 || out.length == 0;
}

void appendUtf8(std::string& out, uint32_t c) {
    if (c < 0x80) {
        out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
        out.push_back(static_cast<char>(0xc0 | (c >> 6)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
    } else if (c < 0x10000) {
        if (c >= 0xd800 && c < 0xe000) {
            out.push_back('?'); // a lone surrogate has no UTF-8 form
            return;
        }
        out.push_back(static_cast<char>(0xe0 | (c >> 12)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
    } else if (c < 0x110000) {
        out.push_back(static_cast<char>(0xf0 | (c >> 18)));
        out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
        out.push_back(static_cast<char>(0x80 | (c & 0x3f)));
    } else {
        out.push_back('?');
    }
}

} // namespace

uint64_t hashBytes(const void* data, size_t size, uint64_t seed) {
    constexpr uint64_t kMul = 0x9fb21c651e98df25ull;
    const auto* p = static_cast<const unsigned char*>(data);
    uint64_t lane[2] = {seed ^ size, 0x243f6a8885a308d3ull ^ (seed << 1)};
    size_t i = 0;
    for (; i + 16 <= size; i += 16) {
        uint64_t a, b;
        std::memcpy(&a, p + i, 8);
        std::memcpy(&b, p + i + 8, 8);
        lane[0] = (lane[0] ^ a) * kMul;
        lane[0] ^= lane[0] >> 29;
        lane[1] = (lane[1] ^ b) * kMul;
        lane[1] ^= lane[1] >> 29;
    }
    uint64_t tail[2] = {0, 0};
    std::memcpy(tail, p + i, size - i);
    lane[0] = ((lane[0] ^ tail[0]) * kMul) ^ lane[1];
    lane[0] ^= lane[0] >> 32;
    lane[0] = ((lane[0] ^ tail[1]) * kMul);
    return lane[0] ^ (lane[0] >> 29);
}

bool readStr(const Interpreter& in, uintptr_t object, size_t max_bytes, std::string& out) {
    StrData s;
    if (!strData(in, object, s)) {
        return false;
    }
    out.clear();
    for (size_t i = 0; i < s.length && out.size() + 4 <= max_bytes; ++i) {
        uint32_t c = s.kind == 1   ? load<uint8_t>(s.data + i)
                     : s.kind == 2 ? load<uint16_t>(s.data + 2 * i)
                                   : load<uint32_t>(s.data + 4 * i);
        appendUtf8(out, c);
    }
    return true;
}

bool readBytes(const Interpreter& in, uintptr_t object, size_t max_bytes, std::string& out) {
    Contents c;
    if (!bytesContents(in, object, c)) {
        return false;
    }
    out.assign(reinterpret_cast<const char*>(c.data), c.size < max_bytes ? c.size : max_bytes);
    return true;
}

bool strContents(const Interpreter& in, uintptr_t object, Contents& out) {
    StrData s;
    if (!strData(in, object, s)) {
        return false;
    }
    out.data = s.data;
    out.kind = s.kind;
    out.size = s.length * s.kind < kMaxContentBytes ? s.length * s.kind : kMaxContentBytes;
    return true;
}

bool bytesContents(const Interpreter& in, uintptr_t object, Contents& out) {
    const Layout& l = in.layout;
    if (object == 0 || load<uintptr_t>(object + l.object_type) != in.bytes_type) {
        return false;
    }
    const int64_t size = load<int64_t>(object + l.bytes_size);
    if (size < 0) {
        return false;
    }
    out.data = object + l.bytes_data;
    out.kind = 1;
    out.size =
        static_cast<size_t>(size) < kMaxContentBytes ? static_cast<size_t>(size) : kMaxContentBytes;
    return true;
}

} // namespace gmt::preload::python
