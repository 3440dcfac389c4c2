// JSON written piece by piece, for the exports that stream one line or one event at a time
// (a JSON document object per line would cost an allocation per field). Strings from a
// trace may hold any bytes: they are made valid UTF-8 and escaped here.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

namespace gmt::analyzer {

// `text` as a JSON string literal, quotes included.
void appendJsonString(std::string& out, std::string_view text);

template <typename Int> void appendInt(std::string& out, Int value) {
    static_assert(std::is_integral_v<Int>);
    char digits[24];
    auto [end, ec] = std::to_chars(digits, digits + sizeof digits, value);
    out.append(digits, end);
}

// Nanoseconds as microseconds with three decimals ("12.345"): exact, no floating point.
void appendMicroseconds(std::string& out, uint64_t ns);

// One JSON object on one line, field by field: `line.num("pid", 12).str("api", "cudaMalloc")`
// then `text()` ("{...}\n") and `clear()` to reuse its buffer.
class JsonLine {
  public:
    template <typename Int> JsonLine& num(std::string_view key, Int value) {
        this->key(key);
        appendInt(text_, value);
        return *this;
    }
    JsonLine& str(std::string_view key, std::string_view value) {
        this->key(key);
        appendJsonString(text_, value);
        return *this;
    }
    // A name this program owns (an API, kind or op name): nothing to check or escape.
    JsonLine& name(std::string_view key, std::string_view value) {
        this->key(key);
        text_ += '"';
        text_ += value;
        text_ += '"';
        return *this;
    }
    JsonLine& boolean(std::string_view key, bool value) {
        this->key(key);
        text_ += value ? "true" : "false";
        return *this;
    }
    JsonLine& null(std::string_view key) {
        this->key(key);
        text_ += "null";
        return *this;
    }
    const std::string& text() {
        text_ += "}\n";
        return text_;
    }
    void clear() { text_.clear(); }

  private:
    void key(std::string_view key) {
        text_ += text_.empty() ? "{\"" : ",\"";
        text_ += key; // keys are this program's own names: nothing to escape
        text_ += "\":";
    }
    std::string text_;
};

} // namespace gmt::analyzer
