// Where a JSON writer's values go, one event at a time: into a Json tree (JsonTreeSink), or
// straight into JSON text (JsonTextSink), written exactly as jsonText() (base/json.h) would
// write the same tree. A report of a million stacks is gigabytes as a tree of nlohmann
// values; as text it costs only its own bytes. A writer emits, for every value, either a
// scalar (value) or a container (begin/end), and inside an object a key before each.
#pragma once

#include "base/json.h"

#include <functional>
#include <string>
#include <string_view>
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
    void value(const Json& v);
    // What `out` holds to the drain (nothing without one).
    void flush();

  private:
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
