// Timeline downsampling: bounded points, each bucket's maximum kept.
#include "analysis/timeline.h"
#include "report_fixture.h"

#include <catch2/catch.hpp>

using namespace gmt;
using namespace gmt::test;

TEST_CASE("the timeline keeps at most N points and never loses a spike") {
    analyzer::Timeline t(100);
    for (uint64_t i = 0; i < 100000; ++i) {
        uint64_t bytes = i % 7;
        if (i == 54321) {
            bytes = 1'000'000; // a spike one event wide
        }
        t.record(1000 + i * 10, bytes);
    }
    auto points = t.points();
    CHECK(points.size() <= 100);
    CHECK(points.size() >= 50);
    uint64_t max = 0, at = 0;
    for (auto [time, bytes] : points) {
        if (bytes > max) {
            max = bytes;
            at = time;
        }
    }
    CHECK(max == 1'000'000);
    CHECK(at == 1000 + 54321 * 10);
    for (size_t i = 1; i < points.size(); ++i) {
        CHECK(points[i - 1].first < points[i].first);
    }
}

TEST_CASE("few changes: every point is kept") {
    analyzer::Timeline t(2000);
    t.record(5, 10);
    t.record(6, 30);
    t.record(9, 20);
    auto p = t.points();
    REQUIRE(p.size() == 3);
    CHECK(p[1] == std::pair<uint64_t, uint64_t>{6, 30});
}

TEST_CASE("the --timeline-points option bounds the report's timeline") {
    auto b = standardTrace();
    for (uint64_t i = 0; i < 5000; ++i) {
        b.event(Ev::alloc(10 + i * 2, 0x7f0000000000, 100 + (i == 3333 ? 1'000'000 : i % 13)));
        b.event(Ev::free(11 + i * 2, 0x7f0000000000));
    }
    analyzer::ReportOptions o;
    o.timeline_points = 64;
    auto r = report(b, o);
    auto points = r.timeline[0].points;
    CHECK(points.size() <= 64);
    uint64_t max = 0;
    for (const auto& [time, bytes] : points) {
        max = std::max<uint64_t>(max, bytes);
    }
    CHECK(max == 1'000'100);
    CHECK(r.summary.peak_bytes == 1'000'100);
}
