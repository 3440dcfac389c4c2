// The worked example of docs/analysis.md, number for number.
#include "report_fixture.h"

#include <catch2/catch.hpp>

using namespace gmt;
using namespace gmt::test;
using format::Api;
using format::Kind;
using format::Op;

namespace {

// Device 0, base B, reservation R: report_fixture.h's fragmentationExample().
constexpr uint64_t B = kExampleBase;
constexpr uint64_t R = kExampleReservation;

const analyzer::FragmentationReport* entry(const analyzer::Report& r, analyzer::Moment moment) {
    for (const auto& f : r.fragmentation) {
        if (f.moment == moment) {
            return &f;
        }
    }
    return nullptr;
}

} // namespace

TEST_CASE("fragmentation: the worked example of docs/analysis.md") {
    auto b = fragmentationExample();
    b.trailer(10);
    auto r = report(b);
    const auto* end = entry(r, analyzer::Moment::End);
    REQUIRE(end);
    const auto& f = *end;
    CHECK(f.device == 0);
    CHECK(f.granularity == 2 * MiB);
    // Holes: 512K (A..B), 256K (B..granule end), 1.5M (C..D), 1M (D's tail), 2M (VMM gap).
    CHECK(f.hole_bytes == 5376 * KiB);
    CHECK(f.hole_count == 5);
    CHECK(f.largest_hole_bytes == 2 * MiB);
    CHECK(f.ratio == Approx(13.0 / 21.0));
    REQUIRE(f.holes.size() == 5);
    CHECK(f.holes[0].address == 0x7f1000200000u);
    CHECK(f.holes[0].bytes == 2 * MiB);
    CHECK(f.holes[1].address == 0x7f0000480000u);
    CHECK(f.holes[1].bytes == 1536 * KiB);
    CHECK(f.holes[2].address == 0x7f0000900000u);
    CHECK(f.holes[3].address == 0x7f0000100000u);
    CHECK(f.holes[3].bytes == 512 * KiB);
    CHECK(f.holes[4].address == 0x7f00001c0000u);
    CHECK(f.holes[4].bytes == 256 * KiB);
    // C alone holds granule 2 (1.5 MiB of it free); D alone holds granules 3-4 (1 MiB free).
    REQUIRE(f.pinning.size() == 2);
    CHECK(f.pinning[0].address == 0x7f0000400000u);
    CHECK(f.pinning[0].pinned_bytes == 1536 * KiB);
    CHECK(f.pinning[0].bytes == 512 * KiB);
    CHECK(f.pinning[1].address == 0x7f0000600000u);
    CHECK(f.pinning[1].pinned_bytes == 1 * MiB);
}

TEST_CASE("fragmentation at the peak is measured on the peak's live set") {
    auto b = fragmentationExample();
    // Free everything but A: the end has one hole (A's granule tail), the peak had five.
    for (uint64_t a : {B + 1536 * KiB, B + 4 * MiB, B + 6 * MiB}) {
        b.event(Ev::free(20, a));
    }
    b.event(Ev::op(21, Op::VmmUnmap, Api::cuMemUnmap, R, 8 * MiB));
    b.trailer(30);
    auto r = report(b);
    const auto* peak = entry(r, analyzer::Moment::Peak);
    REQUIRE(peak);
    CHECK((*peak).hole_bytes == 5376 * KiB);
    CHECK((*peak).time_ns == 7);
    CHECK((*peak).exact == true);
    const auto* end = entry(r, analyzer::Moment::End);
    REQUIRE(end);
    CHECK((*end).hole_bytes == 1 * MiB);
    CHECK((*end).ratio == 0.0);
    CHECK((*end).pinning.size() == 1);
}

TEST_CASE("no live memory: no holes - ratio 0") {
    auto b = standardTrace();
    b.event(Ev::alloc(1, B, 2 * MiB)).event(Ev::free(2, B)).trailer(3);
    auto r = report(b);
    const auto* end = entry(r, analyzer::Moment::End);
    REQUIRE(end);
    CHECK((*end).hole_bytes == 0);
    CHECK((*end).ratio == 0.0);
    CHECK((*end).holes.empty());
}
