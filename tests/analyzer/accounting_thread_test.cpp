// The accounting on a thread of its own (analysis/accounting_thread.h) against the same
// accounting applied in place: the same random charges (several processes, devices and
// kinds, pinned host memory that is not device-resident, folded allocations, batches of
// removals, settles) given to both, through many laps of the ring. During the pass, each
// process's live bytes and the moments the peak callback is called (with its level and
// time) must be the same at every step; after stopThread(), every level, peak, timeline,
// sampled moment and site the reports read. The end is scripted: the peak's sites taken at
// a gate's moment, not at the removal after it.
#include "analysis/live_accounting.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

using gmt::analyzer::Charge;
using gmt::analyzer::LiveAccounting;
using gmt::analyzer::PeakPoint;
using gmt::format::Kind;

namespace {

gmt::analyzer::AccountingDetail allDetail() {
    gmt::analyzer::AccountingDetail d;
    d.kind_timeline_points = 50;
    d.moments = 20;
    d.moment_sites = 5;
    d.site_timeline_points = 50;
    d.site_timeline_sites = 4;
    return d;
}

// Everything a report reads of an accounting, written out.
std::string readOut(const LiveAccounting& a) {
    std::ostringstream o;
    o << "live " << a.liveBytes() << " peak " << a.peak().bytes << '@' << a.peak().time_ns;
    for (uint32_t p = 0; p < 4; ++p) {
        o << "\nprocess " << p << ' ' << a.processLive(p) << ' ' << a.processPeak(p);
        for (const auto& d : a.processDevices(p)) {
            o << " [" << d.device << ' ' << d.live << ' ' << d.peak << ']';
        }
    }
    for (const auto& [device, peak] : a.devicePeaks()) {
        o << "\ndevice " << device << ' ' << a.deviceLive(device) << ' ' << peak.bytes << '@'
          << peak.time_ns;
    }
    for (Kind k : {Kind::Device, Kind::Managed, Kind::HostPinned, Kind::Vmm}) {
        o << "\nkind " << static_cast<int>(k) << ' ' << a.kindPeak(k).bytes << '@'
          << a.kindPeak(k).time_ns;
    }
    for (const auto& [device, t] : a.timelines()) {
        o << "\ntimeline " << device;
        for (const auto& [time, bytes] : t.points()) {
            o << ' ' << time << ':' << bytes;
        }
    }
    for (const auto& [device, t] : a.kindTimelines()) {
        o << "\nkinds " << device;
        for (const auto& s : t.samples()) {
            o << ' ' << s.time_ns << ':' << s.total;
            for (uint64_t level : s.levels) {
                o << ',' << level;
            }
        }
    }
    for (const auto& [device, t] : a.siteTimelines()) {
        o << "\nsites " << device;
        for (const auto& s : t.samples()) {
            o << ' ' << s.time_ns << ':' << s.total;
            for (const auto& [site, bytes] : s.top) {
                o << ',' << site << '=' << bytes;
            }
        }
    }
    for (const auto& m : a.moments()) {
        o << "\nmoment " << m.time_ns << '-' << m.until_ns << ' ' << m.bytes << ' ' << m.sites;
        for (const auto& [site, live] : m.top) {
            o << ' ' << site << '=' << live.bytes << '/' << live.allocations;
        }
    }
    for (const auto& [site, live] : a.peakSites()) {
        o << "\nat peak " << site << ' ' << live.bytes << '/' << live.allocations;
    }
    for (const auto& [site, live] : a.allocatedSites()) {
        o << "\nallocated " << site << ' ' << live.bytes << '/' << live.allocations;
    }
    a.forEachSiteHistory([&](uint64_t site, const gmt::analyzer::SiteHistory& h) {
        o << "\nhistory " << site << ' ' << h.allocations << ' ' << h.first_ns << ' ' << h.last_ns
          << ' ' << h.max_bytes << ' ' << h.new_maxima << ' ' << h.last_max_ns;
    });
    return o.str();
}

} // namespace

TEST_CASE("accounting thread: the same accounting as in place, step by step and at the end") {
    LiveAccounting here(60, allDetail());
    LiveAccounting there(60, allDetail());
    // (step, level, time) of each call of the peak callback.
    std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> here_peaks, there_peaks;
    uint64_t step = 0;
    here.onPeakSnapshot(
        [&](const PeakPoint& p) { here_peaks.emplace_back(step, p.bytes, p.time_ns); });
    there.onPeakSnapshot(
        [&](const PeakPoint& p) { there_peaks.emplace_back(step, p.bytes, p.time_ns); });
    there.startThread();

    std::mt19937_64 rng(23);
    // The sites add() returned for each: kNoSite from the thread, found again on removal.
    struct Live {
        Charge here, there;
    };
    std::vector<Live> live;
    const Kind kinds[] = {Kind::Device, Kind::Device, Kind::Managed, Kind::HostPinned, Kind::Vmm};
    uint64_t t = 1;
    // 300 000 operations: the ring (32 768) laps several times.
    for (; step < 300'000; ++step, t += 1 + rng() % 3) {
        const uint64_t r = rng() % 1000;
        if (r < 3) {
            here.settle(); // a gate before an end (Lifetimes::gate())
            there.settle();
        } else if (r < 5 && !live.empty()) {
            // A teardown: some removals in one batch.
            here.beginRemovals();
            there.beginRemovals();
            for (int n = 0; n < 20 && !live.empty(); ++n) {
                const Live l = live.back();
                live.pop_back();
                here.remove(l.here, t);
                there.remove(l.there, t);
            }
            here.endRemovals(t);
            there.endRemovals(t);
        } else if (r < 7) {
            Charge c;
            c.process = static_cast<uint32_t>(rng() % 3);
            c.stack = static_cast<uint32_t>(rng() % 40);
            c.kind = Kind::Device;
            c.bytes = 1 + rng() % 100'000;
            const uint64_t allocations = 1 + rng() % 9;
            here.addFolded(c, allocations);
            there.addFolded(c, allocations);
        } else if (live.empty() || r < 520) {
            Charge c;
            // Process 0 alone for the first part (its levels derived from the totals).
            c.process = step < 50'000 ? 0 : static_cast<uint32_t>(rng() % 3);
            c.stack = static_cast<uint32_t>(rng() % 40);
            c.device = static_cast<int>(rng() % 5 == 0 ? rng() % 3 : step / 20'000 % 3);
            c.kind = kinds[rng() % 5];
            c.resident = c.kind != Kind::HostPinned;
            c.bytes = rng() % 7 == 0 ? 0 : 1 + rng() % (1 << 20);
            Live l{c, c};
            l.here.site = here.add(c, t);
            l.there.site = there.add(c, t);
            live.push_back(l);
        } else {
            const size_t i = rng() % live.size();
            const Live l = live[i];
            live[i] = live.back();
            live.pop_back();
            here.remove(l.here, t);
            there.remove(l.there, t);
        }
        for (uint32_t p = 0; p < 3; ++p) {
            REQUIRE(there.processLive(p) == here.processLive(p));
        }
        REQUIRE(there_peaks.size() == here_peaks.size());
    }
    // The last peak settled by a gate, then a zero-byte allocation (it counts at its site
    // but moves no level) and a removal: the peak's sites are those of the gate's moment,
    // without the allocation after it.
    Charge big;
    big.kind = Kind::Device;
    big.bytes = uint64_t{1} << 40;
    here.add(big, t);
    there.add(big, t);
    here.settle();
    there.settle();
    Charge empty = big; // at the same site: its allocations at the peak would count it
    empty.bytes = 0;
    here.add(empty, t + 1);
    there.add(empty, t + 1);
    here.remove(big, t + 2);
    there.remove(big, t + 2);
    there.stopThread();
    REQUIRE(there_peaks == here_peaks);
    REQUIRE(here_peaks.size() > 100); // the peak moved, and was settled, many times
    REQUIRE(readOut(there) == readOut(here));
}

TEST_CASE("accounting thread: stopped before an observer is set, and nothing is lost") {
    LiveAccounting a(10);
    a.startThread();
    Charge c;
    c.kind = Kind::Device;
    c.bytes = 100;
    for (uint64_t t = 1; t <= 100'000; ++t) {
        a.add(c, t); // 100'000 allocations at one site: three laps of the ring and more
    }
    struct Count : gmt::analyzer::SiteObserver {
        int charges = 0;
        void onCharge(const Charge&, bool, uint64_t) override { ++charges; }
    } observer;
    a.setObserver(&observer); // drains and stops the thread first
    REQUIRE(a.liveBytes() == 100 * 100'000);
    a.add(c, 100'001);
    REQUIRE(observer.charges == 1); // told on this thread
    REQUIRE(a.liveBytes() == 100 * 100'001);
    a.stopThread(); // none running: nothing
}
