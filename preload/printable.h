// Text from the environment (a setting's value, a trace path built from one) echoed on the
// traced program's stderr, or into the file `gpumemtrace record` reads: it may hold any
// bytes, escape sequences a terminal would act on among them. The analyzer has its own
// (analyzer/base/text_safety.h), which the recorder cannot link; this is the least of it.
#pragma once

#include <string>
#include <string_view>

namespace gmt::preload {

// Printable ASCII kept; every other byte (control characters, DEL, anything of 0x80 and
// above, so no C1 control either) written as "\xNN". One line, whatever `text` holds.
inline std::string printable(std::string_view text) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        const auto b = static_cast<unsigned char>(c);
        if (b >= 0x20 && b < 0x7f) {
            out += c;
        } else {
            out += "\\x";
            out += kHex[b >> 4];
            out += kHex[b & 0xf];
        }
    }
    return out;
}

} // namespace gmt::preload
