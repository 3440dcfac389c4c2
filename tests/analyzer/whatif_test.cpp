// The what-if replay (docs/whatif.md): the caching allocator model on hand-built request
// sequences with known outcomes, the replay of a PyTorch run's own settings giving its
// recorded figures back, and the `whatif` command's JSON against docs/whatif.schema.json.
#include "block_events.h"
#include "report_fixture.h"

#include "analysis/trace_analysis.h"
#include "analysis/whatif/replay.h"
#include "analysis/whatif/stream_ordered_pool.h"
#include "analysis/whatif/trace_whatif.h"
#include "read/trace_error.h"
#include "support/run_command.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

using namespace gmt;
using namespace gmt::test;
using namespace gmt::analyzer;
using format::BlockAction;

namespace {

std::string cli(const std::string& args) {
    return std::string(GMT_CLI) + " " + args;
}

// A request sequence written as the program made it.
struct Requests {
    RequestStream stream;
    uint64_t t = 0;
    Requests() { stream.streams = {0, 0x5000}; }
    uint32_t alloc(uint64_t size, uint32_t on = 0) {
        Request r;
        r.time_ns = ++t;
        r.size = size;
        r.id = stream.allocations++;
        r.stream = on;
        stream.requests.push_back(r);
        return r.id;
    }
    void free(uint32_t id) {
        for (const RequestKind k : {RequestKind::FreeRequested, RequestKind::FreeCompleted}) {
            Request r;
            r.time_ns = ++t;
            r.id = id;
            r.kind = k;
            stream.requests.push_back(r);
        }
    }
    void emptyCache() {
        Request r;
        r.time_ns = ++t;
        r.kind = RequestKind::Release;
        stream.requests.push_back(r);
    }
};

ModelPolicy policy(const std::string& setting) {
    std::string error;
    auto s = parseReplaySetting(setting, error);
    REQUIRE(s);
    return policyOf(*s);
}

ReplayResult run(const Requests& r, const std::string& setting,
                 std::optional<uint64_t> capacity = std::nullopt) {
    return replayOnce(r.stream, policy(setting), capacity);
}

} // namespace

TEST_CASE("whatif: blocks split from a 20 MiB segment and merge again when freed") {
    Requests r;
    const uint32_t a = r.alloc(3 * MiB);
    r.alloc(5 * MiB);
    r.free(a);
    r.alloc(2 * MiB + 1); // into a's 3 MiB: less than 1 MiB left, the whole block
    const auto res = run(r, "default");
    CHECK(res.figures.peak_reserved_bytes == 20 * MiB);
    CHECK(res.figures.cuda_malloc_calls == 1);
    CHECK(res.figures.peak_allocated_bytes == 8 * MiB);
    CHECK(res.figures.allocated_bytes == 8 * MiB);
    // Small requests pack into 2 MiB segments of their own pool.
    Requests small;
    for (int i = 0; i < 4; ++i) {
        small.alloc(512 * KiB);
    }
    small.alloc(1); // a fifth: a second small segment
    const auto s = run(small, "default");
    CHECK(s.figures.peak_reserved_bytes == 4 * MiB);
    CHECK(s.figures.cuda_malloc_calls == 2);
    CHECK(s.figures.peak_allocated_bytes == 2 * MiB + 512);
    // Every block freed and merged: a request of the whole segment takes it, no new one.
    Requests merged;
    const uint32_t x = merged.alloc(4 * MiB), y = merged.alloc(4 * MiB), z = merged.alloc(4 * MiB);
    merged.free(y);
    merged.free(x);
    merged.free(z);
    merged.alloc(19 * MiB);
    CHECK(run(merged, "default").figures.cuda_malloc_calls == 1);
}

TEST_CASE("whatif: streams keep their own blocks") {
    Requests r;
    const uint32_t a = r.alloc(3 * MiB, 0);
    r.free(a);
    r.alloc(3 * MiB, 1); // the free block is stream 0's
    const auto res = run(r, "default");
    CHECK(res.figures.peak_reserved_bytes == 40 * MiB);
    // The stream-ordered pool shares freed memory between streams.
    CHECK(
        replayOnce(r.stream, streamOrderedPoolPolicy(), std::nullopt).figures.peak_reserved_bytes ==
        4 * MiB);
}

TEST_CASE("whatif: max_split_size_mb keeps oversize blocks whole") {
    Requests r;
    const uint32_t a = r.alloc(200 * MiB);
    r.free(a);
    r.alloc(100 * MiB);
    // Default: the 200 MiB block is split for the 100 MiB request.
    CHECK(run(r, "default").figures.peak_reserved_bytes == 200 * MiB);
    // Oversize blocks serve only oversize requests: a new segment.
    const auto split = run(r, "max_split_size_mb:128");
    CHECK(split.figures.peak_reserved_bytes == 300 * MiB);
    CHECK(split.figures.cuda_malloc_calls == 2);
    // An oversize request takes a cached oversize block less than 20 MiB larger...
    Requests close;
    close.free(close.alloc(200 * MiB));
    close.alloc(190 * MiB);
    CHECK(run(close, "max_split_size_mb:128").figures.cuda_malloc_calls == 1);
    // ...but not one 20 MiB larger or more.
    Requests far;
    far.free(far.alloc(200 * MiB));
    far.alloc(180 * MiB);
    CHECK(run(far, "max_split_size_mb:128").figures.cuda_malloc_calls == 2);
    // Short of memory, the oversize cached block is given back for the new one.
    const auto tight = run(r, "max_split_size_mb:128", 250 * MiB);
    CHECK_FALSE(tight.oom);
    CHECK(tight.figures.cuda_free_calls == 1);
    CHECK(tight.figures.peak_reserved_bytes == 200 * MiB);
}

TEST_CASE("whatif: roundup_power2_divisions rounds to steps between powers of two") {
    Requests r;
    r.alloc(4 * MiB + 1);
    CHECK(run(r, "default").figures.peak_allocated_bytes == 4 * MiB + 512);
    CHECK(run(r, "roundup_power2_divisions:4").figures.peak_allocated_bytes == 5 * MiB);
}

TEST_CASE("whatif: expandable segments map pages as they grow and unmap them when emptied") {
    Requests r;
    const uint32_t a = r.alloc(30 * MiB);
    const uint32_t b = r.alloc(5 * MiB);  // in the 10 MiB left of the second page
    const uint32_t c = r.alloc(30 * MiB); // grows: 5 MiB free + two more 20 MiB pages
    auto res = run(r, "expandable_segments:True");
    CHECK(res.figures.peak_reserved_bytes == 80 * MiB);
    CHECK(res.figures.cuda_malloc_calls == 2);
    CHECK(res.figures.cuda_free_calls == 0);
    CHECK(res.figures.fragmentation_bytes == 15 * MiB);
    r.free(a);
    r.free(b);
    r.free(c);
    r.emptyCache();
    res = run(r, "expandable_segments:True");
    CHECK(res.figures.reserved_bytes == 0);
    CHECK(res.figures.cuda_free_calls == 1);
    // The same requests with default settings: three segments.
    const auto plain = run(r, "default");
    CHECK(plain.figures.peak_reserved_bytes == 30 * MiB + 20 * MiB + 30 * MiB);
    CHECK(plain.figures.cuda_malloc_calls == 3);
    CHECK(plain.figures.cuda_free_calls == 3);
}

TEST_CASE("whatif: an OOM at a capacity that expandable segments avoid") {
    Requests r;
    r.free(r.alloc(60 * MiB)); // default: a 60 MiB segment; expandable: three 20 MiB pages
    r.alloc(12 * MiB);         // split from it: 48 MiB free behind it, the segment pinned
    r.alloc(50 * MiB);
    const uint64_t capacity = 100 * MiB;
    // Default: 60 + 50 MiB do not fit, and no cached segment is whole to give back.
    const auto plain = run(r, "default", capacity);
    REQUIRE(plain.oom);
    CHECK(plain.oom->request_index == 4);
    CHECK(plain.oom->requested_bytes == 50 * MiB);
    CHECK(plain.oom->reserved_bytes == 60 * MiB);
    CHECK(plain.figures.cuda_free_calls == 0);
    // Expandable: the two free whole pages behind the 12 MiB block are unmapped, then the
    // segment grows again from its free end.
    const auto expandable = run(r, "expandable_segments:True", capacity);
    CHECK_FALSE(expandable.oom);
    CHECK(expandable.figures.peak_reserved_bytes == 80 * MiB);
    CHECK(expandable.figures.cuda_free_calls == 1);
    CHECK(minCapacity(r.stream, policy("default"), run(r, "default").figures.peak_reserved_bytes) ==
          110 * MiB);
}

// PyTorch's limit (set_per_process_memory_fraction) under expandable segments: checked
// once, before the segment grows, against the size a new segment would have had (20 MiB
// for a request of 1 to 10 MiB, else the request rounded to 2 MiB), never against the
// pages then mapped (allocator_model.cpp, grow()). On an H200 a training run reserved
// 604 MiB under a 600 MiB limit so (docs/validation.md, "What if").
TEST_CASE("whatif: expandable segments may reserve past the limit, and are charged the request") {
    Requests r;
    r.free(r.alloc(60 * MiB));
    r.alloc(12 * MiB);
    r.alloc(50 * MiB);
    // At 70 MiB: 60 + 50 MiB do not fit; the free pages are unmapped (20 MiB left), and
    // 20 + 50 MiB do: the 42 MiB it lacks map three 20 MiB pages, 80 MiB in all.
    const auto above = run(r, "expandable_segments:True", 70 * MiB);
    CHECK_FALSE(above.oom);
    CHECK(above.figures.peak_reserved_bytes == 80 * MiB);
    const auto short_of = run(r, "expandable_segments:True", 68 * MiB);
    REQUIRE(short_of.oom);
    CHECK(short_of.oom->requested_bytes == 50 * MiB);
    CHECK(minCapacity(r.stream, policy("expandable_segments:True"), 80 * MiB) == 70 * MiB);

    // One 12 MiB tensor under a 12 MiB limit: a 20 MiB page, and no OOM.
    Requests one;
    one.alloc(12 * MiB);
    const auto page = run(one, "expandable_segments:True", 12 * MiB);
    CHECK_FALSE(page.oom);
    CHECK(page.figures.peak_reserved_bytes == 20 * MiB);
    CHECK(minCapacity(one.stream, policy("expandable_segments:True"), 20 * MiB) == 12 * MiB);

    // The other way: 18 MiB free at the segment's end and one more page would hold a 30 MiB
    // request (40 MiB), but PyTorch charges the whole 30 MiB: 20 + 30 > 45.
    Requests tail;
    tail.alloc(2 * MiB);
    tail.alloc(30 * MiB);
    const auto charged = run(tail, "expandable_segments:True", 45 * MiB);
    REQUIRE(charged.oom);
    CHECK(charged.oom->requested_bytes == 30 * MiB);
    CHECK(charged.oom->reserved_bytes == 20 * MiB);
    CHECK_FALSE(run(tail, "expandable_segments:True", 50 * MiB).oom);
}

TEST_CASE("whatif: garbage collection gives the oldest cached segments back at the threshold") {
    Requests r;
    r.free(r.alloc(30 * MiB));
    r.free(r.alloc(40 * MiB));
    r.alloc(50 * MiB);
    const uint64_t capacity = 100 * MiB;
    // Default at 100 MiB: 70 MiB cached + 50 MiB does not fit; everything is given back.
    const auto plain = run(r, "default", capacity);
    CHECK_FALSE(plain.oom);
    CHECK(plain.figures.peak_reserved_bytes == 70 * MiB);
    CHECK(plain.figures.cuda_free_calls == 2);
    // At a threshold of 50 MiB only the older 30 MiB segment goes (20 MiB were needed).
    const auto collected = run(r, "garbage_collection_threshold:0.5", capacity);
    CHECK_FALSE(collected.oom);
    CHECK(collected.figures.peak_reserved_bytes == 90 * MiB);
    CHECK(collected.figures.cuda_free_calls == 1);
    // Without a capacity it never runs.
    CHECK(run(r, "garbage_collection_threshold:0.5").figures.cuda_free_calls == 0);
}

TEST_CASE("whatif: replaying PyTorch's own run under its own settings gives the recorded figures") {
    TempDir dir;
    auto b = h200Sequence();
    const std::string path = b.write(dir.file("t.gmtrace"));
    const TraceRequests trace = readRequests(path);
    CHECK(trace.attached);
    CHECK(trace.complete);
    REQUIRE(trace.devices.size() == 1);
    const RequestStream& d = trace.devices[0];
    CHECK(d.source == RequestSource::PyTorchBlocks);
    CHECK(d.allocations == 6);
    CHECK(d.streams.size() == 2);
    CHECK(d.recorded.peak_reserved_bytes == 85983232);
    CHECK(d.recorded.segment_allocs == 5);
    CHECK(d.recorded.segment_frees == 1);
    CHECK(d.requests.back().kind == RequestKind::Release); // the cache emptied at the end
    const ReplaySetting own = recordedSetting(trace.config, trace.backend);
    const WhatIfRun run = replayRun(trace, d, {own}, {{"64MiB", 64 * MiB}});
    REQUIRE(run.settings.size() == 1);
    const WhatIfSetting& s = run.settings[0];
    CHECK(run.recorded.replay_matches == true);
    CHECK(s.peak_reserved_bytes == 85983232);
    CHECK(s.peak_allocated_bytes == 63980544); // max_memory_allocated
    CHECK(s.cuda_malloc_calls == 5);
    CHECK(s.cuda_free_calls == 1);
    CHECK(s.exact);
    // 82 MiB do not fit in 64 MiB: the 32 MiB tensor runs out.
    REQUIRE(s.capacities.size() == 1);
    CHECK_FALSE(s.capacities[0].fits);
    REQUIRE(s.capacities[0].oom);
    CHECK(s.capacities[0].oom->requested_bytes == 33554432);
    CHECK(s.capacities[0].oom->stream == kH200Stream);
    CHECK(s.capacities[0].oom->stack_id == 4);
    CHECK(s.min_capacity_bytes == 85983232);
    // Other settings' replays are exact too here: every free completed at once. Expandable
    // segments map 20 MiB pages: 2 + 40 MiB on the default stream, 2 + 40 on the other.
    std::string error;
    const WhatIfRun other =
        replayRun(trace, d, {*parseReplaySetting("expandable_segments:True", error)}, {});
    CHECK(other.settings[0].exact);
    CHECK(other.settings[0].peak_reserved_bytes == 84 * MiB);
    CHECK(other.settings[0].cuda_malloc_calls == 5);
}

TEST_CASE("whatif: a trace of cudaMalloc calls replays through the caching allocator") {
    TempDir dir;
    auto b = standardTrace();
    for (uint64_t i = 0; i < 10; ++i) {
        const uint64_t address = kExampleBase + i * (16 * MiB);
        b.event(Ev::alloc(1 + 2 * i, address, 3 * MiB, format::Api::cudaMalloc,
                          format::Kind::Device, 1));
        b.event(Ev::free(2 + 2 * i, address));
    }
    b.trailer(100);
    const TraceRequests trace = readRequests(b.write(dir.file("t.gmtrace")));
    REQUIRE(trace.devices.size() == 1);
    const RequestStream& d = trace.devices[0];
    CHECK(d.source == RequestSource::CudaCalls);
    CHECK(d.recorded.segment_allocs == 10);
    CHECK(d.recorded.peak_reserved_bytes == 3 * MiB);
    const WhatIfRun run =
        replayRun(trace, d, defaultReplaySettings(recordedSetting("", ""), false), {});
    const WhatIfSetting& cached = run.settings[0];
    CHECK(cached.cuda_malloc_calls == 1);          // ten calls saved...
    CHECK(cached.peak_reserved_bytes == 20 * MiB); // ...for a 20 MiB segment
    CHECK_FALSE(cached.exact);
    CHECK(run.settings.back().model == "stream_ordered_pool");
    CHECK(run.settings.back().peak_reserved_bytes == 4 * MiB);
}

TEST_CASE("whatif: a damaged size is left out, and the replay says so") {
    TempDir dir;
    auto b = attached();
    segment(b, 1, kSegmentBase, 20 * MiB);
    b.event(block(2, BlockAction::Alloc, kSegmentBase, 3 * MiB));
    b.event(block(3, BlockAction::Alloc, kSegmentBase + 3 * MiB, UINT64_MAX - 7));
    b.event(block(4, BlockAction::FreeRequested, kSegmentBase + 3 * MiB, UINT64_MAX - 7));
    b.event(block(5, BlockAction::Oom, 0, UINT64_MAX));
    b.trailer(10);
    const TraceRequests trace = readRequests(b.write(dir.file("t.gmtrace")));
    REQUIRE(trace.devices.size() == 1);
    CHECK(trace.devices[0].oversized_requests == 2);
    const WhatIfRun run =
        replayRun(trace, trace.devices[0], {recordedSetting(trace.config, trace.backend)}, {});
    CHECK(run.settings[0].peak_reserved_bytes == 20 * MiB);
    CHECK_FALSE(run.settings[0].exact);
    CHECK(run.settings[0].why.find("larger than any device") != std::string::npos);
}

TEST_CASE("whatif: the analysis counts a trace's allocation requests, and a report does not read "
          "again a trace beyond its bound") {
    TempDir dir;
    auto b = attached(); // device 0; no frees, so every request is an allocation request
    b.device(TraceBuilder::defaultDevice(1));
    segment(b, 1, kSegmentBase, 20 * MiB); // its cudaMalloc and segment_alloc
    b.event(block(2, BlockAction::Alloc, kSegmentBase, 3 * MiB));
    b.event(block(3, BlockAction::Alloc, kSegmentBase + 3 * MiB, 1 * MiB));
    b.event(block(4, BlockAction::Oom, 0, (40ull << 30)));
    tf::Event graph = block(5, BlockAction::Alloc, kSegmentBase + 4 * MiB, 1 * MiB);
    graph.handle = 7; // a CUDA graph's private pool: not replayed
    b.event(graph);
    b.event(block(6, BlockAction::Alloc, kSegmentBase + 5 * MiB, UINT64_MAX - 7)); // damaged
    b.event(
        Ev::alloc(7, kExampleBase, 2 * MiB, format::Api::cudaMalloc, format::Kind::Device, 1, 1));
    b.event(Ev::alloc(8, kExampleBase + 4 * MiB, 2 * MiB, format::Api::cudaMallocManaged,
                      format::Kind::Managed));
    b.event(Ev::failed(9, 1ull << 40, 2, 1ull << 30, 80ull << 30));
    b.trailer(20);
    const std::string path = b.write(dir.file("t.gmtrace"));
    constexpr uint64_t kAllocationRequests = 5; // 2 cudaMalloc, 2 blocks, 1 oom
    // What readRequests holds is exactly the count: within it at that bound, beyond below.
    CHECK_FALSE(readRequests(path, kAllocationRequests).too_many_requests);
    CHECK(readRequests(path, kAllocationRequests - 1).too_many_requests);

    Analysis analysis;
    analyzeTraces({path}, analysis);
    const ProcessData& process = *analysis.processes().at(0);
    CHECK(process.allocation_requests == kAllocationRequests);
    std::filesystem::remove(path); // a run that reads the trace again fails
    WhatIfOptions options;
    options.max_requests = kAllocationRequests - 1;
    const std::vector<WhatIfRun> runs = whatIfOfAnalyzedTrace(process, options);
    REQUIRE(runs.size() == 1);
    CHECK(runs[0].trace == path);
    CHECK(runs[0].pid == TraceBuilder::defaultHeader().pid);
    CHECK(runs[0].source == "pytorch_blocks");
    CHECK(runs[0].requests == kAllocationRequests);
    CHECK(runs[0].settings.empty());
    REQUIRE(runs[0].notes.size() == 1);
    CHECK(runs[0].notes[0].find("not replayed: more than 4 allocation requests") == 0);
    options.max_requests = kAllocationRequests; // within the bound: read, as whatif does
    CHECK_THROWS_AS(whatIfOfAnalyzedTrace(process, options), TraceError);
}

TEST_CASE("whatif: settings are checked, the known ones named") {
    std::string error;
    CHECK_FALSE(parseReplaySetting("expandable:True", error));
    CHECK(error.find("known: max_split_size_mb, expandable_segments") != std::string::npos);
    CHECK_FALSE(parseReplaySetting("max_split_size_mb:lots", error));
    CHECK(error.find("a number of MiB") != std::string::npos);
    CHECK_FALSE(parseReplaySetting("garbage_collection_threshold:1.5", error));
    CHECK(parseReplaySetting("backend:cudaMallocAsync", error)->rules.async_backend);
    const auto s = recordedSetting("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,"
                                   "pinned_use_cuda_host_register:True\n",
                                   "native");
    CHECK(s.rules.expandable_segments);
    CHECK(s.not_understood.empty());
    CHECK(recordedSetting("PYTORCH_CUDA_ALLOC_CONF=future_knob:3\n", "native").not_understood ==
          "future_knob:3");
}

TEST_CASE("whatif command: JSON per the schema, text, and bad input") {
    TempDir dir;
    auto b = h200Sequence();
    const std::string path = b.write(dir.file("t.gmtrace"));
    auto r =
        runCommand(cli("whatif " + path + " --capacity A100-40GB --capacity 64MiB --format json"));
    REQUIRE(r.status == 0);
    const auto json = nlohmann::json::parse(r.out);
    std::ifstream f(GMT_WHATIF_SCHEMA);
    SchemaValidator schema(nlohmann::json::parse(f));
    CHECK(schema.validate(json).empty());
    const auto& run = json["runs"][0];
    CHECK(run["recorded"]["replay_matches"] == true);
    CHECK(run["settings"][0]["label"] == "recorded");
    CHECK(run["settings"][0]["peak_reserved_bytes"] == 85983232);
    CHECK(run["settings"][0]["capacities"][0]["capacity_bytes"] == 40ull << 30);
    CHECK(run["settings"][0]["capacities"][1]["fits"] == false);
    // Settings named: only those replayed, the run's own still checked against the recording.
    auto named = runCommand(cli("whatif " + path + " --setting expandable_segments:True," +
                                "max_split_size_mb:64 --format json"));
    REQUIRE(named.status == 0);
    const auto one = nlohmann::json::parse(named.out)["runs"][0];
    CHECK(one["settings"].size() == 1);
    CHECK(one["settings"][0]["setting"] == "expandable_segments:True,max_split_size_mb:64");
    CHECK(one["recorded"]["replay_matches"] == true);
    auto text = runCommand(cli("whatif " + path));
    CHECK(text.status == 0);
    CHECK(text.out.find("expandable_segments:True") != std::string::npos);
    auto bad = runCommand(cli("whatif " + path + " --setting expandable:True"));
    CHECK(bad.status == 2);
    CHECK(bad.err.find("known: max_split_size_mb") != std::string::npos);
    bad = runCommand(cli("whatif " + path + " --capacity lots"));
    CHECK(bad.status == 2);
    CHECK(bad.err.find("RTX4090") != std::string::npos);
    auto empty = standardTrace();
    empty.trailer(5);
    bad = runCommand(cli("whatif " + empty.write(dir.file("e.gmtrace"))));
    CHECK(bad.status == 2);
    CHECK(bad.err.find("no allocations to replay") != std::string::npos);
    bad = runCommand(cli("whatif " + dir.file("missing.gmtrace")));
    CHECK(bad.status == 2);
}

// The report carries the same runs as `whatif` (one story: a figure means the same in
// both), in JSON per docs/report.schema.json, and reads back.
TEST_CASE("whatif: the JSON report carries whatif's figures") {
    TempDir dir;
    auto b = h200Sequence();
    const std::string path = b.write(dir.file("t.gmtrace"));
    auto report = runCommand(cli("report " + path + " --format json"));
    REQUIRE(report.status == 0);
    const auto json = nlohmann::json::parse(report.out);
    std::ifstream f(GMT_REPORT_SCHEMA);
    SchemaValidator schema(nlohmann::json::parse(f));
    CHECK(schema.validate(json).empty());
    auto whatif = runCommand(cli("whatif " + path + " --format json"));
    REQUIRE(whatif.status == 0);
    const auto runs = nlohmann::json::parse(whatif.out)["runs"];
    REQUIRE(json["what_if"].size() == 1);
    CHECK(json["what_if"] == runs);
    const auto& own = json["what_if"][0]["settings"][0];
    CHECK(own["label"] == "recorded");
    CHECK(own["peak_reserved_bytes"] == 85983232);
    CHECK(own["min_capacity_bytes"] == 85983232);
    CHECK(json["what_if"][0]["recorded"]["replay_matches"] == true);
    // Read back (check, diff): the same runs.
    const std::string saved = dir.file("r.json");
    REQUIRE(runCommand(cli("report " + path + " --format json -o " + saved)).status == 0);
    auto again = runCommand(
        cli("check --max-leaked-bytes 1T --no-fail-on-errors --allow-incomplete " + saved));
    CHECK(again.status != 2);
    CHECK(again.err.find("what_if") == std::string::npos);
}

TEST_CASE("whatif: the least capacity is searched for only up to a number of requests") {
    TempDir dir;
    auto b = h200Sequence();
    const TraceRequests trace = readRequests(b.write(dir.file("t.gmtrace")));
    REQUIRE(trace.devices.size() == 1);
    const RequestStream& d = trace.devices[0];
    const ReplaySetting own = recordedSetting(trace.config, trace.backend);
    const WhatIfRun bounded = replayRun(trace, d, {own}, {}, d.requests.size() - 1);
    CHECK_FALSE(bounded.settings[0].min_capacity_bytes);
    CHECK(bounded.settings[0].peak_reserved_bytes == 85983232); // the rest is computed
    REQUIRE_FALSE(bounded.notes.empty());
    CHECK(bounded.notes.back().find("the least capacity is not computed") == 0);
    const WhatIfRun within = replayRun(trace, d, {own}, {}, d.requests.size());
    CHECK(within.settings[0].min_capacity_bytes == 85983232);
}
