#include "export/json_text.h"

#include "base/text_safety.h"

#include <algorithm>

namespace gmt::analyzer {

void appendJsonString(std::string& out, std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    // Most strings (names, paths, frames) are plain ASCII with nothing to escape.
    const bool plain = std::all_of(text.begin(), text.end(), [](char c) {
        const auto u = static_cast<unsigned char>(c);
        return u >= 0x20 && u < 0x80 && c != '"' && c != '\\';
    });
    if (plain) {
        out.push_back('"');
        out.append(text);
        out.push_back('"');
        return;
    }
    const std::string valid = validUtf8(text);
    out.push_back('"');
    for (const char c : valid) {
        const auto u = static_cast<unsigned char>(c);
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\r':
            out += "\\r";
            break;
        default:
            if (u < 0x20) {
                out += "\\u00";
                out.push_back(kHex[u >> 4]);
                out.push_back(kHex[u & 15]);
            } else {
                out.push_back(c);
            }
        }
    }
    out.push_back('"');
}

void appendMicroseconds(std::string& out, uint64_t ns) {
    appendInt(out, ns / 1000);
    const auto frac = static_cast<unsigned>(ns % 1000);
    if (frac != 0) {
        out.push_back('.');
        out.push_back(static_cast<char>('0' + frac / 100));
        out.push_back(static_cast<char>('0' + frac / 10 % 10));
        out.push_back(static_cast<char>('0' + frac % 10));
    }
}

} // namespace gmt::analyzer
