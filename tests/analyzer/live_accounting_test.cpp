// LiveAccounting's per-process, per-device levels and peaks against a plain model, with
// allocations and frees of several processes on several devices interleaved: the entry it
// keeps from the last (process, device) must never be another's, nor a stale one after a
// process's list of devices grew.
#include "analysis/live_accounting.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <utility>
#include <vector>

using gmt::analyzer::Charge;
using gmt::analyzer::LiveAccounting;

namespace {

// Takes one of `live` at random, in no order (the last takes its place).
template <typename T> T takeAny(std::vector<T>& live, std::mt19937_64& rng) {
    const size_t i = rng() % live.size();
    T taken = live[i];
    live[i] = live.back();
    live.pop_back();
    return taken;
}

} // namespace

TEST_CASE("live accounting: every process's level and peak per device, interleaved") {
    LiveAccounting accounting(100);
    struct Live {
        Charge charge;
        uint64_t time_ns;
    };
    std::vector<Live> live;
    std::map<std::pair<uint32_t, int>, std::pair<uint64_t, uint64_t>> model; // live, peak
    std::mt19937_64 rng(7);
    for (uint64_t t = 1; t <= 20'000; ++t) {
        // Mostly the same (process, device) as the step before, as a trace is.
        if (live.empty() || rng() % 3 != 0) {
            Charge c;
            c.process = static_cast<uint32_t>(rng() % 5 == 0 ? rng() % 4 : t / 1000 % 4);
            c.device = static_cast<int>(rng() % 7 == 0 ? rng() % 6 : t / 300 % 6);
            c.stack = static_cast<uint32_t>(rng() % 3);
            c.kind = gmt::format::Kind::Device;
            c.bytes = 1 + rng() % 4096;
            c.site = accounting.add(c, t);
            live.push_back({c, t});
            auto& [level, peak] = model[{c.process, c.device}];
            level += c.bytes;
            peak = std::max(peak, level);
        } else {
            const Charge c = takeAny(live, rng).charge;
            accounting.remove(c, t);
            model[{c.process, c.device}].first -= c.bytes;
        }
    }
    for (uint32_t process = 0; process < 4; ++process) {
        std::map<int, std::pair<uint64_t, uint64_t>> got;
        for (const auto& d : accounting.processDevices(process)) {
            REQUIRE(got.emplace(d.device, std::pair(d.live, d.peak)).second); // listed once
        }
        std::map<int, std::pair<uint64_t, uint64_t>> want;
        for (const auto& [key, levels] : model) {
            if (key.first == process) {
                want[key.second] = levels;
            }
        }
        INFO("process " << process);
        REQUIRE(got == want);
    }
}

// One process's levels are the totals' own until a second process charges anything
// (live_accounting.h, derived_process_): before and after that moment, every process's
// level, peak and devices (in the order first charged) must be what a plain model says.
TEST_CASE("live accounting: one process's levels derived, then separated") {
    LiveAccounting accounting(100);
    struct Model {
        uint64_t live = 0;
        uint64_t peak = 0;
        std::vector<int> devices; // as first charged
        std::map<int, std::pair<uint64_t, uint64_t>> per_device;
    };
    std::map<uint32_t, Model> model;
    std::vector<Charge> live;
    std::mt19937_64 rng(11);
    auto step = [&](uint64_t t, uint32_t process) {
        if (live.empty() || rng() % 5 < 3) {
            Charge c;
            c.process = process;
            // Devices 3, 1, 2, 0 in turn: not their order by number.
            c.device = static_cast<int>((3 + 2 * (t / 250)) % 4);
            c.stack = static_cast<uint32_t>(rng() % 4);
            c.kind = gmt::format::Kind::Device;
            c.bytes = 1 + rng() % 8192;
            c.site = accounting.add(c, t);
            live.push_back(c);
            Model& m = model[c.process];
            m.live += c.bytes;
            m.peak = std::max(m.peak, m.live);
            if (!m.per_device.count(c.device)) {
                m.devices.push_back(c.device);
            }
            auto& [level, peak] = m.per_device[c.device];
            level += c.bytes;
            peak = std::max(peak, level);
        } else {
            const Charge c = takeAny(live, rng);
            accounting.remove(c, t);
            model[c.process].live -= c.bytes;
            model[c.process].per_device[c.device].first -= c.bytes;
        }
    };
    auto check = [&](const char* when) {
        INFO(when);
        for (uint32_t process = 0; process < 3; ++process) {
            INFO("process " << process);
            const Model& m = model[process];
            REQUIRE(accounting.processLive(process) == m.live);
            REQUIRE(accounting.processPeak(process) == m.peak);
            std::vector<int> devices;
            for (const auto& d : accounting.processDevices(process)) {
                devices.push_back(d.device);
                REQUIRE(std::pair(d.live, d.peak) == m.per_device.at(d.device));
            }
            REQUIRE(devices == m.devices);
        }
    };
    check("before any charge");
    uint64_t t = 1;
    for (; t <= 1'500; ++t) {
        step(t, 0);
    }
    REQUIRE(accounting.liveBytes() == model[0].live);
    check("process 0 alone");
    for (; t <= 4'000; ++t) {
        step(t, rng() % 3 == 0 ? 2 : 0);
    }
    check("processes 0 and 2");
}

// Every live level saturates (base/saturating.h) and never wraps: against a model that takes
// the saturating steps level by level, the total, each device's and each process's level and
// peak and each site's most live bytes must be the same before, at and after the moment a
// sum would pass 2^64, for one process and after a second's charges gave each its own
// levels; sizes near 2^64 come only after the first 2 000 steps, so the levels below the
// limit are checked too (a faster sum that is exact only below it must still give these).
TEST_CASE("live accounting: every level saturates alike, below and past 2^64") {
    using gmt::analyzer::addSaturating;
    using gmt::analyzer::subtractSaturating;
    LiveAccounting accounting(100);
    struct Level {
        uint64_t live = 0;
        uint64_t peak = 0;
        void add(uint64_t bytes) {
            addSaturating(live, bytes);
            peak = std::max(peak, live);
        }
        void subtract(uint64_t bytes) { subtractSaturating(live, bytes); }
    };
    Level total;
    std::map<int, Level> devices;
    std::map<uint32_t, Level> processes;
    std::map<uint64_t, Level> sites; // process << 32 | stack
    std::vector<Charge> live;
    std::mt19937_64 rng(13);
    auto check = [&](uint64_t t) {
        INFO("step " << t);
        REQUIRE(accounting.liveBytes() == total.live);
        REQUIRE(accounting.peak().bytes == total.peak);
        REQUIRE(accounting.kindPeak(gmt::format::Kind::Device).bytes == total.peak);
        for (const auto& [device, level] : devices) {
            INFO("device " << device);
            REQUIRE(accounting.deviceLive(device) == level.live);
            REQUIRE(accounting.devicePeaks().at(device).bytes == level.peak);
        }
        for (const auto& [process, level] : processes) {
            INFO("process " << process);
            REQUIRE(accounting.processLive(process) == level.live);
            REQUIRE(accounting.processPeak(process) == level.peak);
        }
        accounting.forEachSiteHistory([&](uint64_t key, const gmt::analyzer::SiteHistory& h) {
            INFO("site " << key);
            REQUIRE(h.max_bytes == sites.at(key).peak);
        });
    };
    bool saturated = false;
    for (uint64_t t = 1; t <= 6'000; ++t) {
        if (live.empty() || rng() % 5 < 3) {
            Charge c;
            c.process = t > 4'000 && rng() % 3 == 0 ? 1 : 0;
            c.device = static_cast<int>(rng() % 3);
            c.stack = static_cast<uint32_t>(rng() % 4);
            c.kind = gmt::format::Kind::Device;
            c.bytes = t > 2'000 && rng() % 50 == 0 ? UINT64_MAX - rng() % 4096 : rng() % 8192;
            uint64_t sum = 0;
            saturated = saturated || __builtin_add_overflow(total.live, c.bytes, &sum);
            c.site = accounting.add(c, t);
            live.push_back(c);
            // Process 0's levels are the totals' until process 1 charges (derived_process_).
            if (c.process == 1 && !processes.count(1)) {
                processes[0] = total;
            }
            if (!processes.empty()) {
                processes[c.process].add(c.bytes);
            }
            total.add(c.bytes);
            devices[c.device].add(c.bytes);
            sites[(uint64_t{c.process} << 32) | c.stack].add(c.bytes);
        } else {
            const Charge c = takeAny(live, rng);
            accounting.remove(c, t);
            total.subtract(c.bytes);
            devices[c.device].subtract(c.bytes);
            if (processes.count(c.process)) {
                processes[c.process].subtract(c.bytes);
            }
            sites[(uint64_t{c.process} << 32) | c.stack].subtract(c.bytes);
        }
        check(t);
    }
    CHECK(saturated); // the steps past 2^64 were taken
    CHECK(processes.count(1));
}
