#include "live_accounting.h"

namespace gmt::analyzer {

LiveAccounting::LiveAccounting(size_t timeline_points) : timeline_points_(timeline_points) {}

LiveAccounting::Site& LiveAccounting::site(const Charge& c) {
    uint64_t key = (uint64_t{c.process} << 32) | c.stack;
    Site& s = sites_[key];
    if (!s.dirty) {
        s.dirty = true;
        dirty_.push_back(key);
    }
    return s;
}

uint64_t LiveAccounting::deviceLive(int device) const {
    auto it = device_live_.find(device);
    return it == device_live_.end() ? 0 : it->second;
}

void LiveAccounting::add(const Charge& c, uint64_t time_ns) {
    size_t k = index(c.kind);
    if (c.resident || c.kind == format::Kind::HostPinned) {
        kind_live_[k] += c.bytes;
        if (kind_live_[k] > kind_peak_[k].bytes) {
            kind_peak_[k] = {kind_live_[k], time_ns};
        }
    }
    if (!c.resident) {
        return;
    }
    Site& s = site(c);
    s.now.bytes += c.bytes;
    s.now.allocations += 1;
    uint64_t& dev = device_live_[c.device];
    dev += c.bytes;
    PeakPoint& dp = device_peak_[c.device];
    if (dev > dp.bytes) {
        dp = {dev, time_ns};
    }
    timelines_.try_emplace(c.device, timeline_points_).first->second.record(time_ns, dev);
    total_ += c.bytes;
    if (total_ > peak_.bytes) {
        peak_ = {total_, time_ns};
        pending_ = true;
    }
}

void LiveAccounting::remove(const Charge& c, uint64_t time_ns) {
    size_t k = index(c.kind);
    if (c.resident || c.kind == format::Kind::HostPinned) {
        kind_live_[k] -= std::min(kind_live_[k], c.bytes);
    }
    if (!c.resident) {
        return;
    }
    settle();
    Site& s = site(c);
    s.now.bytes -= std::min(s.now.bytes, c.bytes);
    s.now.allocations -= std::min<uint64_t>(s.now.allocations, 1);
    uint64_t& dev = device_live_[c.device];
    dev -= std::min(dev, c.bytes);
    timelines_.try_emplace(c.device, timeline_points_).first->second.record(time_ns, dev);
    total_ -= std::min(total_, c.bytes);
}

void LiveAccounting::settle() {
    if (pending_) {
        snapshot();
    }
}

void LiveAccounting::snapshot() {
    for (uint64_t key : dirty_) {
        Site& s = sites_[key];
        s.at_peak = s.now;
        s.dirty = false;
    }
    dirty_.clear();
    pending_ = false;
    if (on_snapshot_) {
        on_snapshot_(peak_);
    }
}

std::vector<std::pair<uint64_t, SiteLive>> LiveAccounting::peakSites() const {
    std::vector<std::pair<uint64_t, SiteLive>> out;
    for (const auto& [key, s] : sites_) {
        if (s.at_peak.bytes > 0) {
            out.emplace_back(key, s.at_peak);
        }
    }
    return out;
}

} // namespace gmt::analyzer
