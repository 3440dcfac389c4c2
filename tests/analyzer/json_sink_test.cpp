// JsonTextSink writes scalars itself (appendJsonString and appendInt, base/json_string.h), not
// through a dumped Json: each kind of value, written by both sinks, must give the text
// jsonText() gives for the tree, compact and indented. The exports' lines use the same two.
#include "base/json_sink.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>

using gmt::analyzer::Json;
using gmt::analyzer::JsonTextSink;
using gmt::analyzer::JsonTreeSink;

namespace {

// Every value of interest as a key and as an array item, emitted into `sink`.
template <typename Sink> void emitAll(Sink& sink, const std::string& text) {
    sink.beginObject();
    sink.key(text);
    sink.value(text);
    sink.key("values");
    sink.beginArray();
    sink.value(text);
    sink.value(std::string_view(text));
    sink.value(text.c_str());
    sink.value("literal \"quoted\" \\ /");
    sink.value(std::numeric_limits<int64_t>::min());
    sink.value(std::numeric_limits<int64_t>::max());
    sink.value(std::numeric_limits<uint64_t>::max());
    sink.value(int32_t{-7});
    sink.value(uint16_t{65535});
    sink.value(0);
    sink.value(true);
    sink.value(false);
    sink.value(nullptr);
    sink.value(0.1);
    sink.value(-2.5e300);
    sink.value(3.0);
    sink.value(Json(text));
    sink.value(Json(uint64_t{18446744073709551615u}));
    sink.value(Json(int64_t{-1}));
    sink.value(Json(false));
    sink.value(Json());
    sink.value(Json{{text, Json::array({1, text, nullptr})}, {"empty", Json::object()}});
    sink.end();
    sink.end();
}

void checkSame(const std::string& text) {
    JsonTreeSink tree;
    emitAll(tree, text);
    const Json j = tree.take();
    for (int indent : {-1, 0, 2}) {
        std::string out;
        JsonTextSink sink(out, indent);
        emitAll(sink, text);
        CHECK(out == gmt::analyzer::jsonText(j, indent));
    }
}

} // namespace

TEST_CASE("JSON text written directly: every ASCII byte escaped as jsonText escapes it") {
    for (int c = 0; c < 0x80; ++c) {
        INFO("byte " << c);
        checkSame(std::string("a") + static_cast<char>(c) + "b");
        checkSame(std::string(1, static_cast<char>(c)));
    }
    std::string all;
    for (int c = 0; c < 0x80; ++c) {
        all += static_cast<char>(c);
    }
    checkSame(all);
    checkSame("");
}

TEST_CASE("JSON text written directly: UTF-8, valid or not, as jsonText writes it") {
    checkSame("caf\xc3\xa9 \xe2\x80\xa6 \xf0\x9f\x98\x80"); // valid: kept
    checkSame("caf\xe9 \xff\xfe \xc3 end\x1b[31m");         // invalid: replaced
    checkSame(std::string("nul\0inside\x7f", 12));
}

TEST_CASE("JSON text written directly: a megabyte at a time to the drain, the same bytes") {
    std::string whole;
    std::string streamed;
    std::string rest;
    JsonTextSink one(whole, 2);
    JsonTextSink drained(rest, 2, [&](std::string_view piece) { streamed += piece; });
    for (JsonTextSink* sink : {&one, &drained}) {
        sink->beginArray();
        for (int i = 0; i < 200'000; ++i) {
            sink->value(uint64_t{1} << (i % 64));
            sink->value("item \"" + std::to_string(i) + "\"\n");
        }
        sink->end();
        sink->flush();
    }
    CHECK(whole.size() > (size_t{1} << 20) * 3);
    CHECK(streamed + rest == whole);
}
