#include "base/json_sink.h"

#include <array>

namespace gmt::analyzer {

Json& JsonTreeSink::place(Json v) {
    if (open_.empty()) {
        root_ = std::move(v);
        return root_;
    }
    // Only the innermost open container grows, so the pointers to the outer ones (each
    // the last member of its parent) stay valid.
    Json& parent = *open_.back();
    if (parent.is_array()) {
        parent.push_back(std::move(v));
        return parent.back();
    }
    Json& slot = parent[key_];
    slot = std::move(v);
    return slot;
}

void JsonTextSink::newMember() {
    Level& level = levels_.back();
    if (!level.empty) {
        out_ += ',';
    }
    level.empty = false;
    if (indent_ >= 0) {
        out_ += '\n';
        out_.append(levels_.size() * static_cast<size_t>(indent_), ' ');
    }
}

void JsonTextSink::beforeValue() {
    if (after_key_) {
        after_key_ = false;
    } else if (!levels_.empty()) {
        newMember(); // an array's item
    }
}

void JsonTextSink::key(std::string_view name) {
    newMember();
    string(name);
    out_ += indent_ >= 0 ? ": " : ":";
    after_key_ = true;
}

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

void JsonTextSink::string(std::string_view text) {
    const size_t start = out_.size();
    out_ += '"';
    size_t plain = 0; // the start of the bytes not yet copied, copied as one run
    for (size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (kPlainBytes[c]) [[likely]] {
            continue;
        }
        if (c >= 0x80) {
            // nlohmann checks the UTF-8 and replaces what is not (jsonText's error
            // handler); its replacements are its own, so it writes such a string.
            out_.resize(start);
            out_ += jsonText(Json(std::string(text)));
            return;
        }
        out_.append(text.data() + plain, i - plain);
        plain = i + 1;
        switch (c) {
        case '"':
            out_ += "\\\"";
            break;
        case '\\':
            out_ += "\\\\";
            break;
        case '\b':
            out_ += "\\b";
            break;
        case '\f':
            out_ += "\\f";
            break;
        case '\n':
            out_ += "\\n";
            break;
        case '\r':
            out_ += "\\r";
            break;
        case '\t':
            out_ += "\\t";
            break;
        default: {
            // Other control characters as \u00xx, lower-case hex, as nlohmann writes them.
            constexpr char kHex[] = "0123456789abcdef";
            const char escaped[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
            out_.append(escaped, sizeof escaped);
        }
        }
    }
    out_.append(text.data() + plain, text.size() - plain);
    out_ += '"';
}

void JsonTextSink::open(char bracket) {
    beforeValue();
    out_ += bracket;
    levels_.push_back(Level{bracket == '{' ? '}' : ']'});
}

void JsonTextSink::end() {
    const Level level = levels_.back();
    levels_.pop_back();
    if (!level.empty && indent_ >= 0) {
        out_ += '\n';
        out_.append(levels_.size() * static_cast<size_t>(indent_), ' ');
    }
    out_ += level.close;
    maybeDrain();
}

void JsonTextSink::valueJson(const Json& v) {
    switch (v.type()) {
    case Json::value_t::object:
    case Json::value_t::array:
        emitJson(v, *this);
        return;
    case Json::value_t::string:
        value(v.get_ref<const std::string&>());
        return;
    case Json::value_t::number_integer:
        value(v.get<int64_t>());
        return;
    case Json::value_t::number_unsigned:
        value(v.get<uint64_t>());
        return;
    case Json::value_t::boolean:
        value(v.get<bool>());
        return;
    case Json::value_t::null:
        value(nullptr);
        return;
    default:
        scalar(jsonText(v)); // a double: nlohmann's shortest form
    }
}

void JsonTextSink::flush() {
    if (drain_) {
        drain_(out_);
        out_.clear();
    }
}

} // namespace gmt::analyzer
