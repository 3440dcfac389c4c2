// A JSON string or integer appended to text, as nlohmann's dump writes it (jsonText(),
// base/json.h): for the writers that write JSON a piece at a time (JsonTextSink,
// base/json_sink.h; the exports' lines, export/json_text.h), so that a value costs its own
// bytes, not a JSON value made and dumped.
#pragma once

#include <charconv>
#include <string>
#include <string_view>
#include <type_traits>

namespace gmt::analyzer {

// `text` as a JSON string literal, quotes included. Strings from a trace may hold any bytes:
// invalid UTF-8 is replaced as jsonText() replaces it.
void appendJsonString(std::string& out, std::string_view text);

template <typename Int> void appendInt(std::string& out, Int value) {
    static_assert(std::is_integral_v<Int>);
    char digits[24]; // 20 digits and a sign at most
    auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
    out.append(digits, end);
}

} // namespace gmt::analyzer
