// Events decoded with their words written around the cache (analyzer/read/event_stores.h)
// are the events decoded with plain stores, byte for byte, and the events encoded: on the
// decoder's short path (an allocation loop: time, address, size, stack) and its full one,
// with every field, negative values included, taking arbitrary bits.
#include "read/event_stores.h"

#include <gpumemtrace/format/byte_coding.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

using namespace gmt;

TEST_CASE("event stores: events decoded around the cache are the events") {
    std::mt19937_64 rng(42);
    for (int round = 0; round < 200; ++round) {
        // A run of events: some change only what an allocation loop changes.
        std::vector<format::Event> events(64);
        format::Event e;
        for (format::Event& out : events) {
            e.time_ns += rng() % 1000;
            e.address = rng();
            e.size = rng() % 4096;
            e.stack_id = static_cast<uint32_t>(rng());
            if (rng() % 3 == 0) {
                e.op = static_cast<format::Op>(1 + rng() % 4);
                e.actual_size = rng();
                e.handle = rng();
                e.stream = rng();
                e.context = rng();
                e.offset = rng();
                e.device_free = rng();
                e.device_total = rng();
                e.flags = static_cast<uint32_t>(rng());
                e.tid = static_cast<uint32_t>(rng());
                e.result = rng() % 2 ? -1 : static_cast<int32_t>(rng());
                e.device = rng() % 2 ? int16_t{-1} : static_cast<int16_t>(rng());
                e.api = static_cast<format::Api>(rng());
                e.kind = static_cast<format::Kind>(rng());
            }
            out = e;
        }
        format::EventCoder encoder;
        std::vector<uint8_t> bodies(events.size() * format::kMaxEventBody);
        std::vector<std::pair<size_t, size_t>> spans;
        format::ByteWriter w(bodies.data(), bodies.size());
        for (const format::Event& ev : events) {
            const size_t begin = w.size();
            format::encodeEventBody(w, ev, encoder);
            spans.emplace_back(begin, w.size());
        }
        format::EventCoder plain_coder, streamed_coder;
        for (size_t i = 0; i < events.size(); ++i) {
            const uint8_t* p = bodies.data() + spans[i].first;
            const uint8_t* end = bodies.data() + spans[i].second;
            format::Event plain, streamed;
            REQUIRE(format::decodeEventBody(p, end, end, plain, plain_coder));
            REQUIRE(format::decodeEventBody(p, end, end, streamed, streamed_coder,
                                            analyzer::StreamedWordStore{}));
            analyzer::finishStreaming();
            REQUIRE(std::memcmp(&streamed, &plain, sizeof plain) == 0);
            REQUIRE(std::memcmp(&streamed, &events[i], sizeof plain) == 0);
        }
    }
}
