#include "base/text_safety.h"

#include <utf8.h>

#include <cstdio>
#include <iterator>

namespace gmt::analyzer {

std::string validUtf8(std::string_view text) {
    if (utf8::is_valid(text.begin(), text.end())) {
        return std::string(text);
    }
    std::string out;
    utf8::replace_invalid(text.begin(), text.end(), std::back_inserter(out));
    return out;
}

namespace {

bool isControl(uint32_t cp) {
    return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0);
}

void escapeBytes(std::string& out, std::string_view bytes) {
    for (char c : bytes) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
        out += buf;
    }
}

} // namespace

std::string printable(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    auto it = text.begin();
    while (it != text.end()) {
        auto bad = utf8::find_invalid(it, text.end());
        while (it != bad) {
            auto start = it;
            const uint32_t cp = utf8::unchecked::next(it);
            if (isControl(cp)) {
                escapeBytes(out, std::string_view(&*start, static_cast<size_t>(it - start)));
            } else {
                out.append(start, it);
            }
        }
        if (bad != text.end()) {
            escapeBytes(out, std::string_view(&*bad, 1));
            ++it;
        }
    }
    return out;
}

size_t columns(std::string_view utf8) {
    size_t n = 0;
    for (char c : utf8) {
        n += (static_cast<unsigned char>(c) & 0xc0) != 0x80 ? 1 : 0;
    }
    return n;
}

std::string fitColumns(std::string_view utf8, size_t width) {
    if (columns(utf8) <= width) {
        return std::string(utf8);
    }
    if (width == 0) {
        return {};
    }
    // Keep width - 1 characters, then the ellipsis.
    size_t kept = 0, end = 0;
    while (end < utf8.size()) {
        size_t next = end + 1;
        while (next < utf8.size() && (static_cast<unsigned char>(utf8[next]) & 0xc0) == 0x80) {
            ++next;
        }
        if (kept + 1 > width - 1) {
            break;
        }
        ++kept;
        end = next;
    }
    return std::string(utf8.substr(0, end)) + "\u2026";
}

} // namespace gmt::analyzer
