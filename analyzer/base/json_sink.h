// Where a JSON writer's values go, one event at a time: into a Json tree (JsonTreeSink), or
// straight into JSON text (JsonTextSink), written exactly as jsonText() (base/json.h) would
// write the same tree. A report of a million stacks is gigabytes as a tree of nlohmann
// values; as text it costs only its own bytes. A writer emits, for every value, either a
// scalar (value) or a container (begin/end), and inside an object a key before each.
#pragma once

#include "base/json.h"
#include "base/json_string.h"

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace gmt::analyzer {

class JsonTreeSink {
  public:
    void beginObject() { open(Json::object()); }
    void beginArray() { open(Json::array()); }
    void end() { open_.pop_back(); }
    void key(std::string_view name) { key_ = name; }
    void value(Json v) { place(std::move(v)); }

    Json take() { return std::move(root_); }

  private:
    Json& place(Json v);
    void open(Json container) { open_.push_back(&place(std::move(container))); }

    Json root_;
    std::vector<Json*> open_; // the containers being filled, outermost first
    std::string key_;
};

class JsonTextSink {
  public:
    // indent < 0: compact; else pretty with that many spaces per level, as Json::dump.
    // With `drain`, the text goes on to it whenever a megabyte of it has gathered in `out`
    // (and what is left by flush()): a report of a million sites is written without ever
    // being whole in memory.
    using Drain = std::function<void(std::string_view)>;
    JsonTextSink(std::string& out, int indent, Drain drain = {})
        : out_(out), indent_(indent), drain_(std::move(drain)) {}

    void beginObject() { open('{'); }
    void beginArray() { open('['); }
    void end();
    void key(std::string_view name);
    // A value as jsonText() writes it. Strings, integers, booleans and null are written
    // here, with no Json value made and dumped for each: a report of a million sites has
    // tens of millions of them, and each dump allocated its text and a serializer (which
    // asked the C library for the locale). Anything else (a double, a tree) goes through Json.
    template <typename T> void value(const T& v) {
        if constexpr (std::is_same_v<T, Json>) {
            valueJson(v); // first: a Json converts implicitly to most types
        } else if constexpr (std::is_same_v<T, std::nullptr_t>) {
            scalar("null");
        } else if constexpr (std::is_same_v<T, bool>) {
            scalar(v ? "true" : "false");
        } else if constexpr (std::is_integral_v<T>) {
            beforeValue();
            appendInt(out_, v);
            maybeDrain();
        } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
            beforeValue();
            appendJsonString(out_, std::string_view(v));
            maybeDrain();
        } else {
            valueJson(Json(v));
        }
    }
    // What `out` holds to the drain (nothing without one).
    void flush();

  private:
    void valueJson(const Json& v);
    void scalar(std::string_view text) {
        beforeValue();
        out_ += text;
        maybeDrain();
    }
    void maybeDrain() {
        if (drain_ && out_.size() >= kDrainAt) [[unlikely]] {
            flush();
        }
    }
    static constexpr size_t kDrainAt = 1 << 20;
    void beforeValue();
    void newMember();
    void open(char bracket);

    struct Level {
        char close;
        bool empty = true;
    };
    std::string& out_;
    const int indent_;
    const Drain drain_;
    std::vector<Level> levels_;
    bool after_key_ = false;
};

// Emits a whole tree into `sink`, as events.
template <typename Sink> void emitJson(const Json& j, Sink& sink) {
    if (j.is_object()) {
        sink.beginObject();
        for (const auto& [name, member] : j.items()) {
            sink.key(name);
            emitJson(member, sink);
        }
        sink.end();
    } else if (j.is_array()) {
        sink.beginArray();
        for (const Json& item : j) {
            emitJson(item, sink);
        }
        sink.end();
    } else {
        sink.value(j);
    }
}

} // namespace gmt::analyzer
