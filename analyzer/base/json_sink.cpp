#include "base/json_sink.h"

#include "base/json_string.h"

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
    appendJsonString(out_, name);
    out_ += indent_ >= 0 ? ": " : ":";
    after_key_ = true;
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
