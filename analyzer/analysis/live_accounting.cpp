#include "analysis/live_accounting.h"

#include "base/saturating.h"

#include <algorithm>

namespace gmt::analyzer {

LiveAccounting::LiveAccounting(size_t timeline_points, AccountingDetail detail)
    : timeline_points_(timeline_points), detail_(detail) {
    if (detail.moments > 0) {
        moments_ = std::make_unique<MomentSampler>(detail.moments, detail.moment_sites);
    }
}

LiveAccounting::~LiveAccounting() = default;

uint32_t LiveAccounting::findSite(uint64_t key) {
    auto [index, inserted] = site_index_.tryEmplace(key);
    if (inserted) {
        *index = static_cast<uint32_t>(sites_.size());
        Site site;
        site.key = key;
        sites_.push_back(site);
    }
    site_cache_[(static_cast<uint32_t>(key) ^ static_cast<uint32_t>(key >> 32)) % kSiteCache] = {
        key, *index};
    return *index;
}

LiveAccounting::DeviceSlot& LiveAccounting::switchDevice(int device) {
    DeviceSlot& d = device_slot_;
    d.valid = true;
    d.device = device;
    d.live = &device_live_[device];
    d.timeline = &timelines_.try_emplace(device, timeline_points_).first->second;
    d.kinds = &device_kinds_[device];
    d.kind_timeline =
        detail_.kind_timeline_points
            ? &kind_timelines_.try_emplace(device, detail_.kind_timeline_points).first->second
            : nullptr;
    d.site_timeline =
        detail_.site_timeline_points
            ? &site_timelines_
                   .try_emplace(device, detail_.site_timeline_points, detail_.site_timeline_sites)
                   .first->second
            : nullptr;
    auto peak = device_peak_.find(device);
    d.peak = peak == device_peak_.end() ? nullptr : &peak->second;
    return d;
}

LiveAccounting::ProcessDevice& LiveAccounting::findProcessDevice(uint32_t process, int device) {
    std::vector<ProcessDevice>& devices = process_devices_[process];
    last_pd_process_ = process;
    for (ProcessDevice& d : devices) {
        if (d.device == device) {
            last_pd_ = &d;
            return d;
        }
    }
    devices.push_back({device, 0, 0});
    last_pd_ = &devices.back();
    return devices.back();
}

uint64_t LiveAccounting::deviceLive(int device) const {
    auto it = device_live_.find(device);
    return it == device_live_.end() ? 0 : it->second;
}

void LiveAccounting::addFolded(const Charge& c, uint64_t allocations) {
    SiteLive& allocated = sites_[siteIndex(c)].allocated;
    addSaturating(allocated.bytes, c.bytes);
    allocated.allocations += allocations;
}

uint32_t LiveAccounting::add(const Charge& c, uint64_t time_ns) {
    size_t k = index(c.kind);
    if (c.resident || c.kind == format::Kind::HostPinned) {
        addSaturating(kind_live_[k], c.bytes);
        if (kind_live_[k] > kind_peak_[k].bytes) {
            kind_peak_[k] = {kind_live_[k], time_ns};
        }
    }
    if (!c.resident) {
        SiteLive& allocated = sites_[siteIndex(c)].allocated;
        addSaturating(allocated.bytes, c.bytes);
        allocated.allocations += 1;
        if (c.kind == format::Kind::HostPinned) {
            recordHost(time_ns);
        }
        return kNoSite;
    }
    sampleMoment(time_ns);
    if (c.process >= process_live_.size()) {
        process_live_.resize(c.process + 1);
        process_peak_.resize(c.process + 1);
        process_devices_.resize(c.process + 1);
        last_pd_ = nullptr;
    }
    addSaturating(process_live_[c.process], c.bytes);
    process_peak_[c.process] = std::max(process_peak_[c.process], process_live_[c.process]);
    ProcessDevice& pd = processDevice(c.process, c.device);
    addSaturating(pd.live, c.bytes);
    pd.peak = std::max(pd.peak, pd.live);
    const uint32_t site = siteIndex(c);
    Site& s = touch(site);
    addSaturating(s.now.bytes, c.bytes);
    s.now.allocations += 1;
    SiteHistory& h = s.history;
    if (h.allocations++ == 0) {
        h.first_ns = time_ns;
    }
    h.last_ns = time_ns;
    if (s.now.bytes > h.max_bytes) {
        h.max_bytes = s.now.bytes;
        ++h.new_maxima;
        h.last_max_ns = time_ns;
    }
    if (observer_) {
        observer_->onCharge(c, true, time_ns);
    }
    addSaturating(s.allocated.bytes, c.bytes);
    s.allocated.allocations += 1;
    if (s.live_slot == UINT32_MAX) {
        s.live_slot = static_cast<uint32_t>(live_sites_.size());
        live_sites_.push_back(site);
    }
    DeviceSlot& d = deviceSlot(c.device);
    if (d.site_timeline) {
        d.site_timeline->change(s.key, c.bytes, true);
    }
    uint64_t& dev = *d.live;
    addSaturating(dev, c.bytes);
    addSaturating((*d.kinds)[k], c.bytes);
    if (!d.peak) {
        d.peak = &device_peak_[c.device];
    }
    PeakPoint& dp = *d.peak;
    if (dev > dp.bytes) {
        dp = {dev, time_ns};
    }
    d.timeline->record(time_ns, dev);
    recordDetail(d, time_ns);
    addSaturating(total_, c.bytes);
    if (total_ > peak_.bytes) {
        peak_ = {total_, time_ns};
        pending_ = true;
    }
    return site;
}

void LiveAccounting::remove(const Charge& c, uint64_t time_ns) {
    size_t k = index(c.kind);
    if (c.resident || c.kind == format::Kind::HostPinned) {
        subtractSaturating(kind_live_[k], c.bytes);
    }
    if (!c.resident) {
        if (c.kind == format::Kind::HostPinned) {
            if (batch_) {
                host_changed_ = true;
            } else {
                recordHost(time_ns);
            }
        }
        return;
    }
    settle();
    sampleMoment(time_ns);
    if (c.process < process_live_.size()) {
        uint64_t& p = process_live_[c.process];
        subtractSaturating(p, c.bytes);
        ProcessDevice& pd = processDevice(c.process, c.device);
        subtractSaturating(pd.live, c.bytes);
    }
    const uint32_t site = siteIndex(c);
    Site& s = touch(site);
    subtractSaturating(s.now.bytes, c.bytes);
    s.now.allocations -= std::min<uint64_t>(s.now.allocations, 1);
    if (observer_) {
        observer_->onCharge(c, false, time_ns);
    }
    if (s.now.allocations == 0 && s.live_slot != UINT32_MAX) {
        const uint32_t last = live_sites_.back();
        live_sites_[s.live_slot] = last;
        sites_[last].live_slot = s.live_slot;
        live_sites_.pop_back();
        s.live_slot = UINT32_MAX;
    }
    DeviceSlot& d = deviceSlot(c.device);
    if (d.site_timeline) {
        d.site_timeline->change(s.key, c.bytes, false);
    }
    uint64_t& dev = *d.live;
    subtractSaturating(dev, c.bytes);
    uint64_t& level = (*d.kinds)[k];
    subtractSaturating(level, c.bytes);
    if (!batch_) {
        d.timeline->record(time_ns, dev);
        recordDetail(d, time_ns);
    } else if (std::find(batch_devices_.begin(), batch_devices_.end(), c.device) ==
               batch_devices_.end()) {
        batch_devices_.push_back(c.device);
    }
    subtractSaturating(total_, c.bytes);
}

void LiveAccounting::endRemovals(uint64_t time_ns) {
    batch_ = false;
    for (int device : batch_devices_) {
        DeviceSlot& d = deviceSlot(device);
        d.timeline->record(time_ns, *d.live);
        recordDetail(d, time_ns);
    }
    batch_devices_.clear();
    if (host_changed_) {
        recordHost(time_ns);
        host_changed_ = false;
    }
}

void LiveAccounting::recordHost(uint64_t time_ns) {
    if (!detail_.kind_timeline_points) {
        return;
    }
    KindLevels levels{};
    levels[index(format::Kind::HostPinned)] = kind_live_[index(format::Kind::HostPinned)];
    kind_timelines_.try_emplace(kHostDevice, detail_.kind_timeline_points)
        .first->second.record(time_ns, levels);
}

void LiveAccounting::sampleMomentNow(uint64_t time_ns) {
    if (!moments_->due(time_ns, total_, live_sites_.size())) {
        return;
    }
    std::vector<std::pair<uint64_t, SiteLive>> live;
    live.reserve(live_sites_.size());
    for (uint32_t index : live_sites_) {
        live.emplace_back(sites_[index].key, sites_[index].now);
    }
    moments_->take(total_, live_sites_.size(), std::move(live));
}

std::vector<LiveMoment> LiveAccounting::moments() const {
    return moments_ ? moments_->moments() : std::vector<LiveMoment>{};
}

std::vector<std::pair<uint64_t, SiteLive>> LiveAccounting::allocatedSites() const {
    std::vector<std::pair<uint64_t, SiteLive>> out;
    for (const Site& s : sites_) {
        if (s.allocated.allocations > 0) {
            out.emplace_back(s.key, s.allocated);
        }
    }
    return out;
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
