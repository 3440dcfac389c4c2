#include "live_accounting.h"

#include <algorithm>

namespace gmt::analyzer {

LiveAccounting::LiveAccounting(size_t timeline_points) : timeline_points_(timeline_points) {}

uint32_t LiveAccounting::siteIndex(const Charge& c) {
    if (c.site != kNoSite) {
        return c.site;
    }
    uint64_t key = (uint64_t{c.process} << 32) | c.stack;
    auto [index, inserted] = site_index_.tryEmplace(key);
    if (inserted) {
        *index = static_cast<uint32_t>(sites_.size());
        sites_.push_back(Site{key, {}, {}, false});
    }
    return *index;
}

LiveAccounting::Site& LiveAccounting::touch(uint32_t index) {
    Site& s = sites_[index];
    if (!s.dirty) {
        s.dirty = true;
        dirty_.push_back(index);
    }
    return s;
}

LiveAccounting::DeviceSlot& LiveAccounting::deviceSlot(int device) {
    DeviceSlot& d = device_slot_;
    if (!d.valid || d.device != device) {
        d.valid = true;
        d.device = device;
        d.live = &device_live_[device];
        d.timeline = &timelines_.try_emplace(device, timeline_points_).first->second;
        auto peak = device_peak_.find(device);
        d.peak = peak == device_peak_.end() ? nullptr : &peak->second;
    }
    return d;
}

uint64_t LiveAccounting::deviceLive(int device) const {
    auto it = device_live_.find(device);
    return it == device_live_.end() ? 0 : it->second;
}

uint32_t LiveAccounting::add(const Charge& c, uint64_t time_ns) {
    size_t k = index(c.kind);
    if (c.resident || c.kind == format::Kind::HostPinned) {
        kind_live_[k] += c.bytes;
        if (kind_live_[k] > kind_peak_[k].bytes) {
            kind_peak_[k] = {kind_live_[k], time_ns};
        }
    }
    if (!c.resident) {
        return kNoSite;
    }
    if (c.process >= process_live_.size()) {
        process_live_.resize(c.process + 1);
    }
    process_live_[c.process] += c.bytes;
    const uint32_t site = siteIndex(c);
    Site& s = touch(site);
    s.now.bytes += c.bytes;
    s.now.allocations += 1;
    DeviceSlot& d = deviceSlot(c.device);
    uint64_t& dev = *d.live;
    dev += c.bytes;
    if (!d.peak) {
        d.peak = &device_peak_[c.device];
    }
    PeakPoint& dp = *d.peak;
    if (dev > dp.bytes) {
        dp = {dev, time_ns};
    }
    d.timeline->record(time_ns, dev);
    total_ += c.bytes;
    if (total_ > peak_.bytes) {
        peak_ = {total_, time_ns};
        pending_ = true;
    }
    return site;
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
    if (c.process < process_live_.size()) {
        uint64_t& p = process_live_[c.process];
        p -= std::min(p, c.bytes);
    }
    Site& s = touch(siteIndex(c));
    s.now.bytes -= std::min(s.now.bytes, c.bytes);
    s.now.allocations -= std::min<uint64_t>(s.now.allocations, 1);
    DeviceSlot& d = deviceSlot(c.device);
    uint64_t& dev = *d.live;
    dev -= std::min(dev, c.bytes);
    if (!batch_) {
        d.timeline->record(time_ns, dev);
    } else if (std::find(batch_devices_.begin(), batch_devices_.end(), c.device) ==
               batch_devices_.end()) {
        batch_devices_.push_back(c.device);
    }
    total_ -= std::min(total_, c.bytes);
}

void LiveAccounting::endRemovals(uint64_t time_ns) {
    batch_ = false;
    for (int device : batch_devices_) {
        timelines_.try_emplace(device, timeline_points_)
            .first->second.record(time_ns, deviceLive(device));
    }
    batch_devices_.clear();
}

void LiveAccounting::settle() {
    if (pending_) {
        snapshot();
    }
}

void LiveAccounting::snapshot() {
    for (uint32_t index : dirty_) {
        Site& s = sites_[index];
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
    for (const Site& s : sites_) {
        if (s.at_peak.bytes > 0) {
            out.emplace_back(s.key, s.at_peak);
        }
    }
    return out;
}

} // namespace gmt::analyzer
