// The detail the HTML report needs (report.h ReportDetail): by-kind timelines, sampled
// moments, bytes allocated by stack, address layouts and the stack table; their JSON
// (docs/report.schema.json) read back; and the page html_report.cpp makes of them.
#include "analysis/site_timeline.h"
#include "analysis/timeline.h"
#include "report/report_json.h"
#include "report_fixture.h"
#include "support/json_schema.h"
#include "views/html_report.h"

#include <catch2/catch.hpp>

#include <fstream>

using namespace gmt;
using namespace gmt::test;
using format::Api;
using format::Kind;
using format::Op;

namespace {

constexpr uint64_t B = 0x7f0000000000;

analyzer::ReportOptions detailed() {
    analyzer::ReportOptions o;
    o.detail = analyzer::ReportDetail::forHtml();
    return o;
}

// Each bucket's extremes, kinds stacked: device and pool, a spike and a dip, pinned host.
TraceBuilder kindsTrace() {
    auto b = standardTrace();
    b.event(Ev::alloc(10, B, 4 * MiB, Api::cudaMalloc, Kind::Device, 1));
    b.event(Ev::alloc(20, B + 8 * MiB, 2 * MiB, Api::cudaMallocAsync, Kind::Pool, 2));
    b.event(Ev::alloc(30, B + 16 * MiB, 8 * MiB, Api::cudaMalloc, Kind::Device, 3)); // spike
    b.event(Ev::free(31, B + 16 * MiB));
    b.event(Ev::alloc(40, 0x10000, 1 * MiB, Api::cudaMallocHost, Kind::HostPinned, 3, 0));
    b.event(Ev::free(50, B));
    b.trailer(60);
    return b;
}

nlohmann::json schemaJson() {
    std::ifstream f(GMT_REPORT_SCHEMA);
    return nlohmann::json::parse(f);
}

} // namespace

TEST_CASE("KindTimeline keeps each bucket's lowest and highest moment with every kind's level") {
    analyzer::KindTimeline t(4);
    analyzer::KindLevels l{};
    for (uint64_t i = 0; i < 64; ++i) {
        l[1] = i == 37 ? 1000 : 10; // one spike
        l[2] = i == 50 ? 0 : 5;     // one dip of the other kind
        t.record(i, l);
    }
    const auto samples = t.samples();
    REQUIRE(samples.size() <= 8);
    bool spike = false, dip = false;
    for (size_t i = 0; i < samples.size(); ++i) {
        CHECK(samples[i].total == samples[i].levels[1] + samples[i].levels[2]);
        CHECK((i == 0 || samples[i - 1].time_ns <= samples[i].time_ns));
        spike = spike || (samples[i].time_ns == 37 && samples[i].total == 1005);
        dip = dip || (samples[i].time_ns == 50 && samples[i].total == 10);
    }
    CHECK(spike);
    CHECK(dip);
}

TEST_CASE("the by-kind timeline stacks to the total at every sample; pinned host apart") {
    auto b = kindsTrace();
    auto r = report(b, detailed());
    REQUIRE(r.kind_timeline.size() == 2);
    const auto& host = r.kind_timeline[0];
    CHECK(host.device == -1);
    REQUIRE(host.kinds == std::vector<Kind>{Kind::HostPinned});
    CHECK(*std::max_element(host.bytes[0].begin(), host.bytes[0].end()) == 1 * MiB);
    const auto& dev = r.kind_timeline[1];
    CHECK(dev.device == 0);
    REQUIRE(dev.kinds == std::vector<Kind>{Kind::Device, Kind::Pool});
    // The total timeline's points are among the stacked samples, with the same bytes.
    for (const auto& [time, bytes] : r.timeline[0].points) {
        auto it = std::find(dev.time_ns.begin(), dev.time_ns.end(), time);
        REQUIRE(it != dev.time_ns.end());
        const size_t i = static_cast<size_t>(it - dev.time_ns.begin());
        CHECK(dev.bytes[0][i] + dev.bytes[1][i] == bytes);
    }
    auto at = [&](uint64_t t) {
        const size_t i = static_cast<size_t>(std::find(dev.time_ns.begin(), dev.time_ns.end(), t) -
                                             dev.time_ns.begin());
        REQUIRE(i < dev.time_ns.size());
        return std::pair(dev.bytes[0][i], dev.bytes[1][i]);
    };
    CHECK(at(30) == std::pair(12 * MiB, 2 * MiB)); // the spike: 4 + 8 device, 2 pool
    CHECK(at(50) == std::pair(uint64_t{0}, 2 * MiB));
}

TEST_CASE("SiteTimeline keeps each bucket's extremes with the largest sites then") {
    analyzer::SiteTimeline t(4, 2);
    uint64_t total = 0;
    for (uint64_t i = 0; i < 64; ++i) {
        const uint64_t site = i % 3; // sites 0, 1, 2: the third one only grows
        const uint64_t bytes = site == 2 ? 100 : 10;
        const bool added = site == 2 || (i / 3) % 2 == 0;
        t.change(site, bytes, added);
        total = added ? total + bytes : total - std::min(total, bytes);
        t.record(i, total);
    }
    const auto samples = t.samples();
    REQUIRE(samples.size() <= 8);
    uint64_t grown = 0;
    for (const auto& s : samples) {
        REQUIRE(s.top.size() <= 2);
        REQUIRE_FALSE(s.top.empty());
        if (s.time_ns >= 2) {
            CHECK(s.top[0].first == 2); // the growing site is the largest once it has some
        }
        CHECK(s.top[0].second >= grown);
        grown = std::max(grown, s.top[0].second);
        uint64_t listed = 0;
        for (size_t i = 0; i < s.top.size(); ++i) {
            listed += s.top[i].second;
            CHECK((i == 0 || s.top[i - 1].second >= s.top[i].second));
        }
        CHECK(listed <= s.total);
    }
    CHECK(grown == 100 * 21); // i = 2, 5, ..., 62
}

// A site that keeps 16 MiB per step among temporaries of other sites.
TraceBuilder stepLeakTrace() {
    auto b = standardTrace();
    for (uint32_t s : {5u, 10u, 11u, 12u, 13u}) {
        b.stack(s, {0x401000 + s * 16, 0x402000});
    }
    uint64_t t = 1;
    for (uint64_t step = 0; step < 10; ++step) {
        for (uint32_t s = 10; s < 14; ++s) { // temporaries, larger than one step's leak
            b.event(Ev::alloc(t++, B + (1ull << 32) + s * 64 * MiB, 40 * MiB, Api::cudaMalloc,
                              Kind::Device, s));
        }
        b.event(Ev::alloc(t++, B + step * 16 * MiB, 16 * MiB, Api::cudaMalloc, Kind::Device, 5));
        for (uint32_t s = 10; s < 14; ++s) {
            b.event(Ev::free(t++, B + (1ull << 32) + s * 64 * MiB));
        }
    }
    b.trailer(t);
    return b;
}

TEST_CASE("the by-site timeline: the leaking site a growing series, the rest summed") {
    auto b = stepLeakTrace();
    auto o = detailed();
    o.detail.site_timeline_sites = 3;
    auto r = report(b, o);
    REQUIRE(r.site_timeline.size() == 1);
    const auto& dev = r.site_timeline[0];
    CHECK(dev.device == 0);
    REQUIRE(dev.sites.size() == 3);
    REQUIRE(dev.sites[0].stack);
    CHECK(r.stacks[*dev.sites[0].stack].stack_id == 5);
    CHECK(dev.sites[0].max_bytes == 160 * MiB);
    for (size_t i = 1; i < dev.sites.size(); ++i) {
        CHECK(dev.sites[i - 1].max_bytes >= dev.sites[i].max_bytes);
        CHECK(dev.sites[i].max_bytes == 40 * MiB);
    }
    // The series and the rest sum to the total timeline's points at their times.
    for (const auto& [time, bytes] : r.timeline[0].points) {
        auto it = std::find(dev.time_ns.begin(), dev.time_ns.end(), time);
        REQUIRE(it != dev.time_ns.end());
        const size_t i = static_cast<size_t>(it - dev.time_ns.begin());
        uint64_t sum = dev.other_bytes[i];
        for (const auto& site : dev.sites) {
            sum += site.bytes[i];
        }
        CHECK(sum == bytes);
    }
    // The leak only grows, 16 MiB per step, until the process's end releases it.
    const auto& leak = dev.sites[0].bytes;
    const auto top = std::max_element(leak.begin(), leak.end());
    CHECK(*top == 160 * MiB);
    CHECK(std::is_sorted(leak.begin(), top));
    CHECK(std::all_of(top + 1, leak.end(), [&](uint64_t b) { return b == 0 || b == *top; }));
    // Two of the four temporary sites are not drawn: their bytes are in other_bytes.
    CHECK(*std::max_element(dev.other_bytes.begin(), dev.other_bytes.end()) == 80 * MiB);
}

TEST_CASE("moments: the live set by stack, the peak's among them, and what lasted until when") {
    auto b = kindsTrace();
    auto r = report(b, detailed());
    REQUIRE_FALSE(r.moments.empty());
    const analyzer::MomentReport* peak = nullptr;
    for (const auto& m : r.moments) {
        CHECK(m.time_ns <= m.until_ns);
        uint64_t listed = 0;
        for (const auto& s : m.top_sites) {
            listed += s.bytes;
            REQUIRE(s.stack);
            CHECK(*s.stack < r.stacks.size());
        }
        CHECK(listed == m.live_bytes); // few stacks: all listed
        CHECK(m.sites == m.top_sites.size());
        if (m.live_bytes == 14 * MiB) {
            peak = &m;
        }
    }
    REQUIRE(peak);
    CHECK(peak->time_ns == 30);
    CHECK(peak->until_ns == 31);
    REQUIRE(peak->top_sites.size() == 3);
    CHECK(peak->top_sites[0].bytes == 8 * MiB);
    CHECK(r.stacks[*peak->top_sites[0].stack].stack_id == 3);
}

TEST_CASE("moments are bounded, each with the largest stacks and the count of all") {
    auto b = standardTrace();
    for (uint32_t s = 10; s < 60; ++s) {
        b.stack(s, {0x401000 + s * 16, 0x402000});
    }
    uint64_t t = 1;
    for (int round = 0; round < 40; ++round) {
        for (uint32_t s = 10; s < 60; ++s) {
            b.event(
                Ev::alloc(t++, B + s * 4 * MiB, (s + 1) * KiB, Api::cudaMalloc, Kind::Device, s));
        }
        for (uint32_t s = 10; s < 60; ++s) {
            b.event(Ev::free(t++, B + s * 4 * MiB));
        }
    }
    b.trailer(t);
    auto o = detailed();
    o.detail.moments = 16;
    o.detail.moment_sites = 5;
    o.detail.stacks = 3;
    auto r = report(b, o);
    CHECK(r.moments.size() <= 16);
    CHECK(r.moments.size() >= 8);
    bool full = false;
    for (const auto& m : r.moments) {
        CHECK(m.top_sites.size() <= 5);
        for (size_t i = 1; i < m.top_sites.size(); ++i) {
            CHECK(m.top_sites[i - 1].bytes >= m.top_sites[i].bytes);
        }
        full = full || m.sites == 50;
    }
    CHECK(full); // a sample of all 50 stacks live, 5 listed
    // The stack table holds 3; the other stacks referred to are counted.
    CHECK(r.stacks.size() == 3);
    CHECK(r.stacks_left_out > 0);
}

TEST_CASE("allocated in total: every allocation by stack, counted beyond the listed ones") {
    auto b = kindsTrace();
    auto o = detailed();
    o.detail.allocated_sites = 2;
    auto r = report(b, o);
    REQUIRE(r.allocated);
    CHECK(r.allocated->bytes == 15 * MiB); // 4 + 2 + 8 device and pool, 1 pinned host
    CHECK(r.allocated->allocations == 4);
    CHECK(r.allocated->sites == 3);
    REQUIRE(r.allocated->top_sites.size() == 2);
    CHECK(r.allocated->top_sites[0].bytes == 9 * MiB); // stack 3: 8 device + 1 pinned
    CHECK(r.allocated->top_sites[1].bytes == 4 * MiB);
}

TEST_CASE("the address layout of the fragmentation example: spans, blocks, holes in order") {
    // docs/analysis.md's worked example (tests/analyzer/fragmentation_test.cpp).
    constexpr uint64_t R = kExampleReservation;
    auto b = fragmentationExample();
    b.trailer(10);
    auto r = report(b, detailed());
    const analyzer::FragmentationReport* end = nullptr; // the peak's: everything is live
    for (const auto& f : r.fragmentation) {
        if (f.moment == analyzer::Moment::Peak) {
            end = &f;
        }
        if (f.moment == analyzer::Moment::End) {
            CHECK_FALSE(f.layout); // one per process at the end would grow with the run
        }
    }
    REQUIRE(end);
    REQUIRE(end->layout);
    const auto& l = *end->layout;
    // Granules 0, 2 and 3-4 are touched: runs [B, B+2M) and [B+4M, B+10M); then R.
    REQUIRE(l.spans.size() == 3);
    CHECK(l.span_count == 3);
    CHECK((l.spans[0].address == B && l.spans[0].bytes == 2 * MiB && !l.spans[0].reservation));
    CHECK((l.spans[1].address == B + 4 * MiB && l.spans[1].bytes == 6 * MiB));
    CHECK((l.spans[2].address == R && l.spans[2].bytes == 8 * MiB && l.spans[2].reservation));
    REQUIRE(l.blocks.size() == 6);
    CHECK(l.block_count == 6);
    std::vector<uint64_t> addresses;
    for (const auto& block : l.blocks) {
        addresses.push_back(block.address);
    }
    CHECK(addresses ==
          std::vector<uint64_t>{B, B + 1536 * KiB, B + 4 * MiB, B + 6 * MiB, R, R + 4 * MiB});
    // C and D pin 1.5 MiB and 1 MiB; A and B' share their granule.
    CHECK(l.blocks[0].pinned_bytes == 0);
    CHECK(l.blocks[2].pinned_bytes == 1536 * KiB);
    CHECK(l.blocks[3].pinned_bytes == 1 * MiB);
    CHECK(l.blocks[4].kind == Kind::Vmm);
    REQUIRE(l.holes.size() == 5);
    uint64_t hole_bytes = 0;
    for (size_t i = 0; i < l.holes.size(); ++i) {
        hole_bytes += l.holes[i].bytes;
        CHECK((i == 0 || l.holes[i - 1].address < l.holes[i].address));
    }
    CHECK(hole_bytes == end->hole_bytes);

    SECTION("cut at the first entries in address order, counted in full") {
        auto o = detailed();
        o.detail.layout_entries = 2;
        auto cut = report(b, o);
        for (const auto& f : cut.fragmentation) {
            if (f.moment != analyzer::Moment::Peak) {
                continue;
            }
            REQUIRE(f.layout);
            CHECK(f.layout->spans.size() == 2);
            CHECK(f.layout->span_count == 3);
            REQUIRE(f.layout->blocks.size() == 2);
            CHECK(f.layout->blocks[1].address == B + 1536 * KiB);
            CHECK(f.layout->block_count == 6);
            CHECK(f.layout->holes.size() == 2);
            CHECK(f.hole_count == 5);
        }
    }
}

TEST_CASE("address layouts at the first failures only") {
    auto b = standardTrace();
    b.event(Ev::alloc(1, B, 1 * MiB));
    for (uint64_t t = 2; t < 8; ++t) {
        b.event(Ev::failed(t, 100ull << 30, 2, 1ull << 30, 80ull << 30));
    }
    b.trailer(9);
    auto o = detailed();
    o.detail.layout_failures = 4;
    auto r = report(b, o);
    size_t with = 0, without = 0;
    for (const auto& f : r.fragmentation) {
        if (f.moment == analyzer::Moment::Failure) {
            (f.layout ? with : without) += 1;
        }
    }
    CHECK(with == 4);
    CHECK(without == 2);
}

TEST_CASE("detail is left out unless asked for") {
    auto b = kindsTrace();
    auto r = report(b);
    CHECK(r.kind_timeline.empty());
    CHECK(r.site_timeline.empty());
    CHECK(r.moments.empty());
    CHECK_FALSE(r.allocated);
    CHECK(r.stacks.empty());
    for (const auto& f : r.fragmentation) {
        CHECK_FALSE(f.layout);
    }
}

TEST_CASE("detail in JSON: valid against the schema, read back as written") {
    auto b = standardTrace();
    b.event(Ev::alloc(1, B, 1 * MiB, Api::cudaMalloc, Kind::Device, 1));
    b.event(Ev::failed(2, 100ull << 30, 2, 1ull << 30, 80ull << 30));
    b.event(Ev::alloc(3, 0x10000, 4096, Api::cudaMallocHost, Kind::HostPinned, 2));
    b.trailer(4);
    auto r = report(b, detailed());
    REQUIRE_FALSE(r.stacks.empty());
    const auto j = analyzer::toJson(r);
    gmt::test::SchemaValidator schema(schemaJson());
    auto errors = schema.validate(j);
    INFO((errors.empty() ? "" : errors[0]));
    CHECK(errors.empty());
    const auto back = analyzer::fromJson(j);
    CHECK(analyzer::toJson(back) == j);

    auto broken = j;
    broken["moments"][0]["top_sites"][0]["stack"] = 999u;
    CHECK_THROWS_WITH(analyzer::fromJson(broken),
                      Catch::Contains("moments[0].top_sites[0].stack: no such entry in stacks[]"));
    broken = j;
    broken["kind_timeline"][0]["bytes"][0].push_back(1u);
    CHECK_THROWS_WITH(analyzer::fromJson(broken), Catch::Contains("as many values as time_ns"));
    REQUIRE_FALSE(j["site_timeline"][0]["sites"].empty());
    broken = j;
    broken["site_timeline"][0]["sites"][0]["bytes"].push_back(1u);
    CHECK_THROWS_WITH(analyzer::fromJson(broken),
                      Catch::Contains("site_timeline[0].sites[0].bytes: expected as many values"));
    broken = j;
    broken["site_timeline"][0]["other_bytes"].push_back(1u);
    CHECK_THROWS_WITH(analyzer::fromJson(broken), Catch::Contains("other_bytes: expected as many"));
}

TEST_CASE("the HTML page: one file with the report inside, frames listed once, nothing fetched") {
    if (!analyzer::htmlReportAvailable()) {
        // Built without the npm packages: the CLI says so (cli tests); nothing to render.
        CHECK_FALSE(analyzer::htmlReportUnavailableReason().empty());
        return;
    }
    auto b = kindsTrace();
    b.module({0x400000, 0x400000, 0x500000, "/usr/bin/app</script><!--", ""});
    auto r = report(b, analyzer::htmlReportOptions());
    const std::string page = analyzer::renderHtml(r);
    CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
    for (const char* marker : {"/*GMT_STYLE*/", "/*GMT_DATA*/", "/*GMT_SCRIPT*/"}) {
        CHECK(page.find(marker) == std::string::npos);
    }
    CHECK(page.find("uPlot") != std::string::npos);
    // Only the page's own script elements end: a path from a trace cannot end one.
    size_t scripts = 0;
    for (size_t at = page.find("</script"); at != std::string::npos;
         at = page.find("</script", at + 1)) {
        ++scripts;
    }
    CHECK(scripts == 2);
    CHECK(page.find("src=") == std::string::npos);
    // The data element holds the JSON report with frames interned.
    const std::string open = "<script type=\"application/json\" id=\"gmt-data\">";
    const size_t from = page.find(open) + open.size();
    const size_t to = page.find("</script>", from);
    const auto data = nlohmann::json::parse(page.substr(from, to - from));
    const auto& frames = data["frames"];
    REQUIRE(frames.is_array());
    CHECK(data["report"]["schema_version"] == 1);
    const auto& leak_stack = data["report"]["leaks"][0]["stack"];
    REQUIRE(leak_stack.is_array());
    REQUIRE(leak_stack[0].is_number_unsigned());
    const auto& frame = frames[leak_stack[0].get<size_t>()];
    CHECK(frame.contains("label"));
    CHECK(frame.contains("hidden"));
    // Every distinct frame once.
    std::set<std::string> seen;
    for (const auto& f : frames) {
        auto copy = f;
        copy.erase("label");
        copy.erase("where");
        copy.erase("hidden");
        CHECK(seen.insert(copy.dump()).second);
    }
}
