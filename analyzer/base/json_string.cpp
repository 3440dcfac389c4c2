#include "base/json_string.h"

#include "base/json.h"

#include <array>
#include <cstddef>

namespace gmt::analyzer {

namespace {
// The bytes a JSON string holds as they are: printable ASCII but the quote and the backslash.
constexpr std::array<bool, 256> kPlainBytes = [] {
    std::array<bool, 256> plain{};
    for (int c = 0x20; c < 0x80; ++c) {
        plain[c] = c != '"' && c != '\\';
    }
    return plain;
}();
} // namespace

void appendJsonString(std::string& out, std::string_view text) {
    const size_t start = out.size();
    out += '"';
    size_t plain = 0; // the start of the bytes not yet copied, copied as one run
    for (size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (kPlainBytes[c]) [[likely]] {
            continue;
        }
        if (c >= 0x80) {
            // nlohmann checks the UTF-8 and replaces what is not (jsonText's error
            // handler); its replacements are its own, so it writes such a string.
            out.resize(start);
            out += jsonText(Json(std::string(text)));
            return;
        }
        out.append(text.data() + plain, i - plain);
        plain = i + 1;
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\f':
            out += "\\f";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default: {
            // Other control characters as \u00xx, lower-case hex, as nlohmann writes them.
            constexpr char kHex[] = "0123456789abcdef";
            const char escaped[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
            out.append(escaped, sizeof escaped);
        }
        }
    }
    out.append(text.data() + plain, text.size() - plain);
    out += '"';
}

} // namespace gmt::analyzer
