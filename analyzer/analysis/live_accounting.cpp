#include "analysis/live_accounting.h"

#include "base/saturating.h"

#include <algorithm>
#include <exception>

namespace gmt::analyzer {

LiveAccounting::LiveAccounting(size_t timeline_points, AccountingDetail detail)
    : timeline_points_(timeline_points), detail_(detail) {
    if (detail.moments > 0) {
        moments_ = std::make_unique<MomentSampler>(detail.moments, detail.moment_sites);
    }
}

LiveAccounting::~LiveAccounting() = default;

LiveAccounting::Deferred::Deferred(LiveAccounting& accounting)
    : totals([&accounting](const PeakPoint& peak) {
          if (accounting.on_snapshot_) {
              accounting.on_snapshot_(peak);
          }
      }),
      thread(accounting) {}

void LiveAccounting::startThread() {
    if (deferred_) {
        return;
    }
    try {
        deferred_ = std::make_unique<Deferred>(*this);
    } catch (const std::exception&) {
        // No thread to be had (out of memory, or the system's limit): the accounting stays
        // on the caller's thread, with the same results.
    }
}

void LiveAccounting::stopThread() {
    if (!deferred_) {
        return;
    }
    // Ended whether or not draining threw (the thread is idle either way): an accounting
    // that failed is not used again. Not before: the thread reads deferred_ as it applies.
    try {
        deferred_->thread.drain();
    } catch (...) {
        deferred_.reset();
        throw;
    }
    deferred_.reset();
}

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

void LiveAccounting::markDirty(uint32_t index) {
    sites_[index].dirty = true;
    dirty_.push_back(index);
}

LiveAccounting::DeviceSlot& LiveAccounting::switchDevice(int device) {
    DeviceSlot& d = device_slot_;
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
    last_pd_key_ = processDeviceKey(process, device);
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

void LiveAccounting::applyAddFolded(const Charge& c, uint64_t allocations) {
    SiteLive& allocated = sites_[siteIndex(c)].allocated;
    addSaturating(allocated.bytes, c.bytes);
    allocated.allocations += allocations;
}

void LiveAccounting::addElsewhere(Charge c, uint64_t time_ns) {
    SiteLive& allocated = sites_[siteIndex(c)].allocated;
    addSaturating(allocated.bytes, c.bytes);
    allocated.allocations += 1;
    if (c.kind == format::Kind::HostPinned) {
        addToKind(kindIndex(c.kind), c.bytes, time_ns);
        recordHost(time_ns);
    }
}

void LiveAccounting::removeElsewhere(Charge c, uint64_t time_ns) {
    if (c.kind != format::Kind::HostPinned) {
        return;
    }
    subtractSaturating(kind_live_[kindIndex(c.kind)], c.bytes);
    if (batch_) {
        host_changed_ = true;
    } else {
        recordHost(time_ns);
    }
}

void LiveAccounting::notify(Charge c, bool added, uint64_t time_ns) {
    observer_->onCharge(c, added, time_ns);
}

std::vector<LiveAccounting::ProcessDevice> LiveAccounting::processDevices(uint32_t process) const {
    if (process == derived_process_) {
        std::vector<ProcessDevice> devices;
        devices.reserve(device_order_.size());
        for (int device : device_order_) {
            devices.push_back({device, device_live_.at(device), device_peak_.at(device).bytes});
        }
        return devices;
    }
    return process < process_devices_.size() ? process_devices_[process]
                                             : std::vector<ProcessDevice>{};
}

void LiveAccounting::separateProcesses() {
    if (process_live_.empty()) {
        addProcess(0);
    }
    process_live_[0] = total_;
    process_peak_[0] = peak_.bytes;
    process_devices_[0] = processDevices(0);
    last_pd_key_ = kNoProcessDevice;
    derived_process_ = kNoDerivedProcess;
}

void LiveAccounting::addProcess(uint32_t process) {
    process_live_.resize(process + 1);
    process_peak_.resize(process + 1);
    process_devices_.resize(process + 1);
    last_pd_key_ = kNoProcessDevice;
}

void LiveAccounting::noteBatchDevice(int device) {
    if (std::find(batch_devices_.begin(), batch_devices_.end(), device) == batch_devices_.end()) {
        batch_devices_.push_back(device);
    }
}

void LiveAccounting::applyEndRemovals(uint64_t time_ns) {
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
    levels[kindIndex(format::Kind::HostPinned)] = kind_live_[kindIndex(format::Kind::HostPinned)];
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
    // Applied on the accounting's own thread, the caller's totals call it instead (at the
    // same moment of the pass, on the thread whose state it reads).
    if (on_snapshot_ && !deferred_) {
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
