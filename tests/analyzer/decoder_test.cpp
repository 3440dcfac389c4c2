// The format's event decoder (format::decodeEventBody, written for speed and reached here
// through the analyzer's record decoder) against a plain field-by-field walk of the same
// coding: same status, same event, same coder state, on well-formed records and on
// arbitrary bytes.
#include "base/flat_map.h"
#include "read/record_decoder.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <unordered_map>
#include <vector>

using namespace gmt;

namespace {

// The coding of trace_format.h spelled out field by field, slowly, with varints read a
// byte at a time: the oracle.
bool referenceDecode(const uint8_t* p, const uint8_t* end, format::Event& out,
                     format::EventCoder& coder) {
    bool ok = true;
    auto varint = [&] {
        uint64_t v = 0;
        ok = ok && format::detail::readVarintBytes(p, end, v);
        return v;
    };
    uint64_t op = varint();
    uint64_t mask = varint();
    if (!ok || op == 0 || op >= format::kOpSlots || mask >> format::kEventFields) {
        return false;
    }
    format::Event e = coder.prev[op];
    format::detail::forEachEventField(e, [&](int i, uint64_t& v) {
        if (mask & (uint64_t{1} << i)) {
            v += format::detail::unzigzag(varint());
        }
    });
    if (!ok) {
        return false;
    }
    e.op = static_cast<format::Op>(op);
    out = e;
    coder.prev[op] = e;
    return true;
}

// The same coding in the encoding direction, field by field: the oracle of the fast
// encoder (format::encodeEventBodyTo).
std::vector<uint8_t> referenceEncode(const format::Event& e, format::EventCoder& coder) {
    format::Event& prev = coder.prev[static_cast<uint8_t>(e.op) % format::kOpSlots];
    uint64_t values[format::kEventFields], prev_values[format::kEventFields];
    format::Event copy = e;
    format::detail::forEachEventField(copy, [&](int i, uint64_t& v) { values[i] = v; });
    format::detail::forEachEventField(prev, [&](int i, uint64_t& v) { prev_values[i] = v; });
    uint64_t mask = 0;
    for (uint32_t i = 0; i < format::kEventFields; ++i) {
        if (values[i] != prev_values[i]) {
            mask |= uint64_t{1} << i;
        }
    }
    uint8_t buf[256];
    format::ByteWriter w(buf, sizeof buf);
    w.varint(static_cast<uint8_t>(e.op));
    w.varint(mask);
    for (uint32_t i = 0; i < format::kEventFields; ++i) {
        if (mask & (uint64_t{1} << i)) {
            w.svarint(static_cast<int64_t>(values[i] - prev_values[i]));
        }
    }
    prev = e;
    return std::vector<uint8_t>(buf, buf + w.size());
}

bool sameEvent(const format::Event& a, const format::Event& b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

bool sameCoder(const format::EventCoder& a, const format::EventCoder& b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

// Decodes `body` as an event record both ways and checks they agree.
void checkBody(const std::vector<uint8_t>& body, format::EventCoder& fast,
               format::EventCoder& reference) {
    std::vector<uint8_t> record;
    uint8_t tmp[16];
    format::ByteWriter w(tmp, sizeof tmp);
    w.varint(body.size());
    record.push_back(static_cast<uint8_t>(format::RecordTag::Event));
    record.insert(record.end(), tmp, tmp + w.size());
    record.insert(record.end(), body.begin(), body.end());

    format::ByteReader r(record);
    analyzer::Record out;
    const auto status = analyzer::decodeRecord(r, out, fast);

    format::Event expected;
    const bool ok = referenceDecode(body.data(), body.data() + body.size(), expected, reference);

    REQUIRE((status == analyzer::DecodeStatus::Ok) == ok);
    if (ok) {
        REQUIRE(out.tag == format::RecordTag::Event);
        REQUIRE(sameEvent(out.event, expected));
    }
    REQUIRE(sameCoder(fast, reference));
}

// Mostly small changes to a few fields, sometimes extreme values in every field.
format::Event randomEvent(std::mt19937_64& rng) {
    format::Event e;
    e.op = static_cast<format::Op>(1 + rng() % 13);
    auto value = [&](uint64_t small) { return rng() % 8 == 0 ? rng() : rng() % small; };
    e.time_ns = value(1u << 30);
    e.address = value(1ull << 47);
    e.size = value(1u << 24);
    e.actual_size = value(4);
    e.handle = value(4);
    e.stream = value(4);
    e.context = value(4);
    e.offset = value(4);
    e.device_free = value(4);
    e.device_total = value(4);
    e.flags = static_cast<uint32_t>(value(4));
    e.stack_id = static_cast<uint32_t>(value(8));
    e.tid = static_cast<uint32_t>(value(4));
    e.result = static_cast<int32_t>(value(3));
    e.device = static_cast<int16_t>(value(3)) - 1;
    e.api = static_cast<format::Api>(value(90));
    e.kind = static_cast<format::Kind>(value(7));
    return e;
}

} // namespace

TEST_CASE("the fast event encoder writes the bytes of the field-by-field coding") {
    std::mt19937_64 rng(4242);
    format::EventCoder fast{}, reference{};
    format::Event last[format::kOpSlots]{};
    for (int i = 0; i < 200000; ++i) {
        format::Event e = randomEvent(rng);
        if (rng() % 2) {
            // An allocation loop's event: the previous of its op with time, address or size
            // changed (or none of them), which the encoder takes its short way for.
            const auto op = e.op;
            e = last[static_cast<uint8_t>(op)];
            e.op = op;
            e.time_ns += rng() % 3 == 0 ? 0 : rng() % 100000;
            e.address += rng() % 2 ? 0 : (rng() % 64) << 12;
            e.size = rng() % 4 ? e.size : rng() % (1u << 20);
        }
        last[static_cast<uint8_t>(e.op)] = e;
        std::vector<uint8_t> expected = referenceEncode(e, reference);
        uint8_t record[format::kMaxEventRecord];
        size_t n = format::encodeEventRecordTo(record, &e, fast);
        REQUIRE(n >= 2);
        REQUIRE(record[0] == static_cast<uint8_t>(format::RecordTag::Event));
        format::ByteReader r(std::span<const uint8_t>(record + 1, n - 1));
        REQUIRE(r.varint() == expected.size());
        auto body = r.bytes(r.remaining());
        REQUIRE(std::vector<uint8_t>(body.begin(), body.end()) == expected);
        REQUIRE(sameCoder(fast, reference));
    }
}

TEST_CASE("the fast event decoder matches the reference on encoded events") {
    std::mt19937_64 rng(12345);
    format::EventCoder writer{}, fast{}, reference{};
    for (int i = 0; i < 200000; ++i) {
        format::Event e = randomEvent(rng);
        uint8_t buf[256];
        format::ByteWriter w(buf, sizeof buf);
        format::encodeEventBody(w, e, writer);
        REQUIRE(w.ok());
        checkBody(std::vector<uint8_t>(buf, buf + w.size()), fast, reference);
        REQUIRE(sameEvent(fast.prev[static_cast<uint8_t>(e.op)], e));
    }
}

TEST_CASE("the fast event decoder matches the reference on arbitrary bytes") {
    std::mt19937_64 rng(777);
    format::EventCoder fast{}, reference{};
    // The same bodies with the buffer going on past them, as in a frame: far enough that the
    // decoder reads their varints without testing the end (the bytes after are continuation
    // bytes half the time, which lengthen a varint read past the end).
    format::EventCoder on{}, reference_on{};
    int ok_on = 0;
    for (int i = 0; i < 200000; ++i) {
        std::vector<uint8_t> body(rng() % 40);
        for (auto& b : body) {
            // Bias towards continuation bytes and small op/mask values.
            b = static_cast<uint8_t>(rng() % 3 == 0 ? 0x80 | rng() : rng() % 20);
        }
        if (!body.empty() && rng() % 2) {
            body[0] = static_cast<uint8_t>(1 + rng() % 15);
        }
        checkBody(body, fast, reference);

        std::vector<uint8_t> buf = body;
        buf.resize(body.size() + format::detail::kUncheckedBodyBytes + rng() % 17);
        for (size_t k = body.size(); k < buf.size(); ++k) {
            buf[k] = static_cast<uint8_t>(rng() % 2 ? 0x80 | rng() : rng());
        }
        format::Event got, expected;
        const uint8_t* end = buf.data() + body.size();
        const bool ok = format::decodeEventBody(buf.data(), end, buf.data() + buf.size(), got, on);
        REQUIRE(ok == referenceDecode(buf.data(), end, expected, reference_on));
        if (ok) {
            REQUIRE(sameEvent(got, expected));
            ++ok_on;
        }
        REQUIRE(sameCoder(on, reference_on));
    }
    REQUIRE(ok_on > 10000);
}

TEST_CASE("the fast event decoder reads only its body when the buffer goes on") {
    // In a frame the next record follows the body: the decoder loads 8 bytes at a time
    // past the body's end (up to `readable`) but must decode exactly what a decoder that
    // sees only the body decodes, and fail where it fails (bodies cut short here).
    std::mt19937_64 rng(9001);
    format::EventCoder writer{}, fast{}, reference{};
    int cut = 0;
    for (int i = 0; i < 200000; ++i) {
        format::Event e = randomEvent(rng);
        uint8_t buf[format::kMaxEventBody + format::detail::kUncheckedBodyBytes + 16];
        format::ByteWriter w(buf, format::kMaxEventBody);
        format::encodeEventBody(w, e, writer);
        REQUIRE(w.ok());
        size_t size = w.size();
        if (rng() % 8 == 0) {
            size = rng() % size; // a truncated body: its last varint runs past the end
            ++cut;
        }
        // What follows: continuation bytes (which would lengthen a misread varint) or any;
        // half the time enough of them that the decoder tests the body's end only once.
        const size_t after = rng() % 17 + (rng() % 2 ? format::detail::kUncheckedBodyBytes : 0);
        for (size_t k = size; k < size + after; ++k) {
            buf[k] = static_cast<uint8_t>(rng() % 2 ? 0x80 | rng() : rng());
        }
        format::Event got, expected;
        const bool ok_fast =
            format::decodeEventBody(buf, buf + size, buf + size + after, got, fast);
        const bool ok_ref = referenceDecode(buf, buf + size, expected, reference);
        REQUIRE(ok_fast == ok_ref);
        if (ok_ref) {
            REQUIRE(sameEvent(got, expected));
        }
        REQUIRE(sameCoder(fast, reference));
        if (!ok_ref) {
            writer = reference; // the encoder's memory took an event the decoders did not
        }
    }
    REQUIRE(cut > 10000);
}

TEST_CASE("FlatMap behaves as a map under random insertions and erasures") {
    std::mt19937_64 rng(99);
    analyzer::FlatMap<uint64_t> m;
    std::unordered_map<uint64_t, uint64_t> ref;
    for (int i = 0; i < 300000; ++i) {
        // A small key space (with the all-ones key) so that probe runs collide.
        uint64_t key = rng() % 7 == 0 ? ~uint64_t{0} : (rng() % 5000) * 4096;
        switch (rng() % 3) {
        case 0: {
            auto [v, inserted] = m.tryEmplace(key);
            REQUIRE(inserted == !ref.contains(key));
            *v = i;
            ref[key] = i;
            break;
        }
        case 1:
            REQUIRE(m.erase(key) == (ref.erase(key) == 1));
            break;
        default: {
            const uint64_t* v = m.find(key);
            auto it = ref.find(key);
            REQUIRE((v != nullptr) == (it != ref.end()));
            if (v) {
                REQUIRE(*v == it->second);
            }
        }
        }
        REQUIRE(m.size() == ref.size());
    }
    size_t seen = 0;
    m.forEach([&](uint64_t key, uint64_t v) {
        ++seen;
        REQUIRE(ref.at(key) == v);
    });
    REQUIRE(seen == ref.size());
}
