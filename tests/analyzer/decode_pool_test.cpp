// Decoding ahead (decode_pool.h, frame_batch.h): whatever the number of workers, the
// batch size and the budget, a reader hands out exactly the records that were written, in
// their order, and stops where the valid log ends, as one reading alone would. Every case
// runs with no worker (the reader decodes every batch), one, and three; traces span many
// batches, with frames larger than a batch among them.
#include "read/decode_pool.h"
#include "read/trace_reader.h"
#include "report_fixture.h"

#include <catch2/catch.hpp>

#include <random>

using namespace gmt;
using namespace gmt::test;
using analyzer::DecodePool;
using analyzer::ReadStatus;
using analyzer::Record;
using analyzer::TraceReader;
using format::RecordTag;

namespace {

// What a trace holds, as written: records in order (events in full; other records by
// tag and one identifying number).
struct Written {
    std::vector<RecordTag> tags;
    std::vector<format::Event> events;
    std::vector<uint64_t> others; // stack id, phase time
};

// Events of every op with every field moving, including narrow and signed ones wrapping
// around, so that a batch corrected after the fact (event_rebase.h) shows any field added
// in the wrong width. Frames of random length; some far larger than a batch.
Written randomTrace(TraceBuilder& b, uint64_t seed, size_t events) {
    std::mt19937_64 rng(seed);
    Written w;
    b.header().device();
    w.tags = {RecordTag::Header, RecordTag::Device};
    size_t in_frame = 0, frame_length = 1;
    for (size_t i = 0; i < events; ++i) {
        format::Event e;
        e.time_ns = 1'000'000 + i * 100 + rng() % 50;
        e.op = static_cast<format::Op>(1 + rng() % 14);
        e.api = static_cast<format::Api>(rng() % 256);
        e.kind = static_cast<format::Kind>(rng() % 256);
        e.address = rng() % 4 ? 0x7f0000000000 + (rng() % 4096) * 0x100000 : rng();
        e.size = rng() % 3 ? (rng() % 64) << 20 : rng();
        e.stack_id = static_cast<uint32_t>(rng() % 8 ? rng() % 100 : rng());
        e.device = static_cast<int16_t>(rng() % 8 ? rng() % 4 : rng());
        e.tid = static_cast<uint32_t>(rng() % 4 ? 100 : rng());
        e.result = static_cast<int32_t>(rng() % 10 ? 0 : rng());
        e.flags = static_cast<uint32_t>(rng() % 10 ? 0 : rng());
        if (rng() % 10 == 0) {
            e.actual_size = rng();
            e.handle = rng();
            e.stream = rng();
            e.context = rng();
            e.offset = rng();
            e.device_free = rng();
            e.device_total = rng();
        }
        b.event(e);
        w.tags.push_back(RecordTag::Event);
        w.events.push_back(e);
        if (rng() % 500 == 0) {
            const auto id = static_cast<uint32_t>(rng() % 1000);
            b.stack(id, {0x401000 + id, 0x402000});
            w.tags.push_back(RecordTag::Stack);
            w.others.push_back(id);
        }
        if (rng() % 700 == 0) {
            b.phase(e.time_ns, "phase");
            w.tags.push_back(RecordTag::Phase);
            w.others.push_back(e.time_ns);
        }
        if (rng() % 900 == 0) {
            b.unknownRecord(200, {1, 2, 3}); // skipped: in no list
        }
        if (++in_frame >= frame_length) {
            b.endFrame();
            in_frame = 0;
            // Mostly recorder-sized frames; now and then one larger than a batch.
            frame_length = rng() % 40 == 0 ? 8000 + rng() % 20000 : 1 + rng() % 3000;
        }
    }
    b.trailer(2'000'000'000, 0);
    w.tags.push_back(RecordTag::Trailer);
    return w;
}

struct Read {
    Written records;
    ReadStatus status;
};

void take(Read& out, const Record& r) {
    out.records.tags.push_back(r.tag);
    if (r.tag == RecordTag::Event) {
        out.records.events.push_back(r.event);
    } else if (r.tag == RecordTag::Stack) {
        out.records.others.push_back(r.stack.id);
    } else if (r.tag == RecordTag::Phase) {
        out.records.others.push_back(r.phase.time_ns);
    }
}

Read readWith(const std::string& path, DecodePool& pool,
              size_t batch = TraceReader::kMinReadAhead) {
    Read out;
    TraceReader reader(path, batch, pool);
    Record r;
    while (reader.next(r)) {
        take(out, r);
    }
    out.status = reader.status();
    return out;
}

// The same, taking the runs of events in place (TraceReader::pendingEvents) while there
// are any, the way analyzeTraces reads a trace alone.
Read readInPlace(const std::string& path, DecodePool& pool, size_t batch) {
    Read out;
    TraceReader reader(path, batch, pool);
    Record r;
    size_t take_at_most = 1;
    for (;;) {
        for (auto run = reader.pendingEvents(); !run.empty(); run = reader.pendingEvents()) {
            // A part of the run at a time (1 to 7 events), as a run cut at `until` is taken.
            const size_t n = std::min(run.size(), take_at_most);
            take_at_most = take_at_most % 7 + 1;
            for (const format::Event& e : run.first(n)) {
                out.records.tags.push_back(RecordTag::Event);
                out.records.events.push_back(e);
            }
            reader.takeEvents(n);
        }
        if (!reader.next(r)) {
            break;
        }
        take(out, r);
    }
    out.status = reader.status();
    return out;
}

bool sameEvents(const std::vector<format::Event>& a, const std::vector<format::Event>& b) {
    if (a.size() != b.size()) {
        return false;
    }
    for (size_t i = 0; i < a.size(); ++i) {
        if (std::memcmp(&a[i], &b[i], sizeof a[i]) != 0) {
            UNSCOPED_INFO("event " << i << " differs");
            return false;
        }
    }
    return true;
}

// A prefix of what was written: the records before the `events`-th event, and after it
// the other records up to the next event.
Written prefix(const Written& w, size_t events) {
    Written p;
    size_t e = 0, o = 0;
    for (RecordTag t : w.tags) {
        if (t == RecordTag::Event) {
            if (e == events) {
                break;
            }
            p.events.push_back(w.events[e++]);
        } else if (t == RecordTag::Stack || t == RecordTag::Phase) {
            p.others.push_back(w.others[o++]);
        }
        p.tags.push_back(t);
    }
    return p;
}

void checkSame(const Written& got, const Written& want) {
    CHECK(got.tags == want.tags);
    CHECK(sameEvents(got.events, want.events));
    CHECK(got.others == want.others);
}

// Reads `path` with 0, 1 and 3 workers: each time the log stops early at `offset` for
// `reason` (a part of the message), after exactly the records of `want` (with
// `events_only`, its events). Returns each read's status for what a case checks beyond.
std::vector<ReadStatus> checkStopsAt(const std::string& path, const Written& want, uint64_t offset,
                                     const std::string& reason, bool events_only = false) {
    std::vector<ReadStatus> statuses;
    for (size_t workers : {0, 1, 3}) {
        INFO(workers << " workers");
        DecodePool pool(workers, DecodePool::kSharedBudget);
        const Read got = readWith(path, pool);
        if (events_only) {
            CHECK(sameEvents(got.records.events, want.events));
        } else {
            checkSame(got.records, want);
        }
        CHECK(got.status.stopped_early);
        CHECK(got.status.log_end_offset == offset);
        CHECK_THAT(got.status.stop_reason, Catch::Contains(reason));
        statuses.push_back(got.status);
    }
    return statuses;
}

// Frame by frame: the offsets of the frames and the events each holds.
struct FrameMap {
    std::vector<uint64_t> offsets;
    std::vector<size_t> events_before; // events in the frames before each
};

FrameMap frameMap(const std::vector<uint8_t>& bytes, const std::vector<uint64_t>& offsets) {
    FrameMap m;
    m.offsets = offsets;
    size_t events = 0;
    for (uint64_t off : offsets) {
        m.events_before.push_back(events);
        format::FrameHeader h;
        std::memcpy(&h, &bytes[off], sizeof h);
        format::ByteReader r(std::span<const uint8_t>(&bytes[off + sizeof h], h.payload_size));
        while (!r.atEnd()) {
            const uint8_t tag = r.byte();
            const uint64_t n = r.varint();
            r.bytes(n);
            events += tag == static_cast<uint8_t>(RecordTag::Event) ? 1 : 0;
        }
    }
    return m;
}

void recomputeChecksum(std::vector<uint8_t>& bytes, uint64_t frame) {
    format::FrameHeader h;
    std::memcpy(&h, &bytes[frame], sizeof h);
    h.checksum = format::frameChecksum(h, &bytes[frame + sizeof h]);
    std::memcpy(&bytes[frame], &h, sizeof h);
}

} // namespace

TEST_CASE("decoding ahead: every record in order - with 0, 1 and 3 workers") {
    TempDir dir;
    TraceBuilder b;
    const Written written = randomTrace(b, 1, 120'000);
    const std::string path = b.write(dir.file("t.gmtrace"));
    for (size_t workers : {0, 1, 3}) {
        for (size_t batch : {TraceReader::kMinReadAhead, TraceReader::kDefaultReadAhead}) {
            for (bool in_place : {false, true}) {
                INFO(workers << " workers, batches of " << batch << " bytes"
                             << (in_place ? ", events taken in place" : ""));
                DecodePool pool(workers, DecodePool::kSharedBudget);
                const Read got =
                    in_place ? readInPlace(path, pool, batch) : readWith(path, pool, batch);
                checkSame(got.records, written);
                CHECK(got.status.complete);
                CHECK(got.status.events == written.events.size());
                CHECK(got.status.skipped_records > 0);
                CHECK_FALSE(got.status.stopped_early);
                CHECK(pool.usage().held == 0); // everything given back
                CHECK(pool.usage().peak <= pool.budget());
            }
        }
    }
}

TEST_CASE("decoding ahead: a worker writes around the cache only when it is the only one") {
    // With one worker the stores around the cache, with two or more through it, so that the
    // test above reads the events of both kinds of store (1 and 3 workers).
    using analyzer::EventStores;
    CHECK(DecodePool(1, DecodePool::kSharedBudget).workerStores() == EventStores::Streamed);
    CHECK(DecodePool(2, DecodePool::kSharedBudget).workerStores() == EventStores::Cached);
    CHECK(DecodePool(3, DecodePool::kSharedBudget).workerStores() == EventStores::Cached);
}

TEST_CASE("decoding ahead: a damaged frame in the middle ends the log there") {
    TempDir dir;
    TraceBuilder b;
    const Written written = randomTrace(b, 2, 60'000);
    std::vector<uint8_t> bytes = b.bytes();
    const FrameMap map = frameMap(bytes, b.frameOffsets());
    size_t k = map.offsets.size() / 2; // from the middle, a frame of two events or more
    while (map.events_before[k + 1] - map.events_before[k] < 2) {
        ++k;
    }
    const uint64_t frame = map.offsets[k];

    SECTION("checksum mismatch") {
        bytes[frame + sizeof(format::FrameHeader) + 3] ^= 0x10;
        TraceBuilder::writeFile(dir.file("t.gmtrace"), bytes);
        for (const ReadStatus& status : checkStopsAt(
                 dir.file("t.gmtrace"), prefix(written, map.events_before[k]), frame, "checksum")) {
            CHECK(status.unknown_tail);
        }
    }
    SECTION("a malformed record under a valid checksum: the records before it are kept") {
        // The frame's first event record gets an op of 0; its checksum is made valid.
        format::FrameHeader h;
        std::memcpy(&h, &bytes[frame], sizeof h);
        format::ByteReader r(std::span<const uint8_t>(&bytes[frame + sizeof h], h.payload_size));
        size_t events = 0;
        uint64_t at = 0;
        while (!r.atEnd()) {
            const size_t pos = h.payload_size - r.remaining();
            const uint8_t tag = r.byte();
            const uint64_t n = r.varint();
            const size_t body = h.payload_size - r.remaining();
            r.bytes(n);
            if (tag == static_cast<uint8_t>(RecordTag::Event) && events++ == 1) {
                at = frame + sizeof h + pos;
                bytes[frame + sizeof h + body] = 0; // op 0: malformed
                break;
            }
        }
        REQUIRE(at != 0);
        recomputeChecksum(bytes, frame);
        TraceBuilder::writeFile(dir.file("t.gmtrace"), bytes);
        checkStopsAt(dir.file("t.gmtrace"), prefix(written, map.events_before[k] + 1), at,
                     "malformed event record");
    }
    SECTION("a record count the frame does not hold: its records are kept, nothing after") {
        format::FrameHeader h;
        std::memcpy(&h, &bytes[frame], sizeof h);
        h.record_count += 1;
        std::memcpy(&bytes[frame], &h, sizeof h);
        recomputeChecksum(bytes, frame);
        TraceBuilder::writeFile(dir.file("t.gmtrace"), bytes);
        checkStopsAt(dir.file("t.gmtrace"), prefix(written, map.events_before[k + 1]), frame,
                     "records but announces", /*events_only=*/true);
    }
}

TEST_CASE("decoding ahead: a truncated tail - the whole frames before it are read") {
    TempDir dir;
    TraceBuilder b;
    const Written written = randomTrace(b, 3, 60'000);
    std::vector<uint8_t> bytes = b.bytes();
    const FrameMap map = frameMap(bytes, b.frameOffsets());
    const size_t k = map.offsets.size() * 2 / 3;
    bytes.resize(map.offsets[k] + 100); // inside frame k
    TraceBuilder::writeFile(dir.file("t.gmtrace"), bytes);
    for (const ReadStatus& status :
         checkStopsAt(dir.file("t.gmtrace"), prefix(written, map.events_before[k]), map.offsets[k],
                      "torn")) {
        CHECK_FALSE(status.complete);
    }
}

TEST_CASE("decoding ahead: many traces at once, on a budget smaller than their batches") {
    // Forty readers open together, each read a record at a time in turn: the workers
    // share themselves and the budget among them; a reader whose next batch nobody
    // started decodes it itself.
    TempDir dir;
    constexpr size_t kTraces = 40;
    std::vector<Written> written;
    std::vector<std::string> paths;
    for (size_t i = 0; i < kTraces; ++i) {
        TraceBuilder b;
        written.push_back(randomTrace(b, 100 + i, 4000 + 500 * i));
        paths.push_back(b.write(dir.file("t" + std::to_string(i) + ".gmtrace")));
    }
    for (size_t workers : {0, 1, 3}) {
        INFO(workers << " workers");
        const size_t batch = TraceReader::kMinReadAhead;
        DecodePool pool(workers, 3 * DecodePool::worstBatchBytes(batch));
        {
            std::vector<std::unique_ptr<TraceReader>> readers;
            std::vector<Read> got(kTraces);
            for (const std::string& p : paths) {
                readers.push_back(std::make_unique<TraceReader>(p, batch, pool));
            }
            Record r;
            for (size_t open = kTraces; open > 0;) {
                open = 0;
                for (size_t i = 0; i < kTraces; ++i) {
                    if (readers[i] && readers[i]->next(r)) {
                        take(got[i], r);
                        ++open;
                    } else if (readers[i]) {
                        got[i].status = readers[i]->status();
                        readers[i].reset(); // ends its stream while others still read
                    }
                }
            }
            for (size_t i = 0; i < kTraces; ++i) {
                INFO("trace " << i);
                checkSame(got[i].records, written[i]);
                CHECK(got[i].status.complete);
            }
        }
        // Decoded ahead: within the budget; beyond it, one batch per reader at most (the
        // one it decoded itself).
        CHECK(pool.usage().peak <= pool.budget() + kTraces * DecodePool::worstBatchBytes(batch));
        CHECK(pool.usage().held == 0);
    }
}

TEST_CASE("decoding ahead: a reader closed before the end leaves the pool clean") {
    TempDir dir;
    TraceBuilder b;
    const Written written = randomTrace(b, 4, 80'000);
    const std::string path = b.write(dir.file("t.gmtrace"));
    DecodePool pool(3, DecodePool::kSharedBudget);
    for (size_t stop_after : {0, 1, 5000, 40'000}) {
        INFO("closed after " << stop_after << " records");
        TraceReader reader(path, TraceReader::kMinReadAhead, pool);
        Record r;
        for (size_t i = 0; i < stop_after && reader.next(r); ++i) {
        }
    }
    CHECK(pool.usage().held == 0);
    // And the pool still reads a whole trace after that.
    checkSame(readWith(path, pool).records, written);
}
