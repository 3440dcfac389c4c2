// JSON written piece by piece, for the exports that stream one line or one event at a time
// (a JSON document object per line would cost an allocation per field). Strings and
// integers as base/json_string.h writes them, as the report's JSON does.
#pragma once

#include "base/json_string.h" // appendJsonString, appendInt

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace gmt::analyzer {

// Nanoseconds as microseconds with three decimals ("12.345"): exact, no floating point.
void appendMicroseconds(std::string& out, uint64_t ns);

// One JSON object on one line, field by field: `line.num("pid", 12).str("api", "cudaMalloc")`
// then `text()` ("{...}\n") and `clear()` to reuse its buffer. A plain buffer and memcpy:
// an ndjson export writes tens of fields per event, and std::string's appends were most of
// its cost.
class JsonLine {
  public:
    template <typename Int> JsonLine& num(std::string_view key, Int value) {
        this->key(key);
        reserve(24);
        auto [end, ec] = std::to_chars(buffer_.data() + used_, buffer_.data() + used_ + 24, value);
        used_ = static_cast<size_t>(end - buffer_.data());
        return *this;
    }
    JsonLine& str(std::string_view key, std::string_view value) {
        this->key(key);
        scratch_.clear();
        appendJsonString(scratch_, value);
        append(scratch_);
        return *this;
    }
    // A name this program owns (an API, kind or op name): nothing to check or escape.
    JsonLine& name(std::string_view key, std::string_view value) {
        this->key(key);
        reserve(value.size() + 2);
        buffer_[used_++] = '"';
        append(value);
        buffer_[used_++] = '"';
        return *this;
    }
    JsonLine& boolean(std::string_view key, bool value) {
        this->key(key);
        append(value ? "true" : "false");
        return *this;
    }
    JsonLine& null(std::string_view key) {
        this->key(key);
        append("null");
        return *this;
    }
    std::string_view text() {
        append("}\n");
        return {buffer_.data(), used_};
    }
    void clear() { used_ = 0; }

  private:
    void reserve(size_t n) {
        if (used_ + n > buffer_.size()) {
            buffer_.resize(std::max(buffer_.size() * 2, used_ + n));
        }
    }
    void append(std::string_view bytes) {
        reserve(bytes.size());
        std::memcpy(buffer_.data() + used_, bytes.data(), bytes.size());
        used_ += bytes.size();
    }
    void key(std::string_view key) {
        reserve(key.size() + 4);
        char* p = buffer_.data() + used_;
        *p++ = used_ == 0 ? '{' : ',';
        *p++ = '"';
        std::memcpy(p, key.data(), key.size()); // this program's own names: no escaping
        p += key.size();
        *p++ = '"';
        *p++ = ':';
        used_ = static_cast<size_t>(p - buffer_.data());
    }
    std::vector<char> buffer_ = std::vector<char>(512);
    size_t used_ = 0;
    std::string scratch_;
};

} // namespace gmt::analyzer
