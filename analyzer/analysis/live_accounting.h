// Live-byte bookkeeping across every traced process: the device-resident total and its
// peak, per device, per kind, per allocation stack, and the timelines.
//
// Top sites at the peak are captured cheaply: every stack counter changed since the last
// snapshot is on a dirty list, and the snapshot (copying only those) is taken lazily,
// just before the first decrease after a new maximum — the moment the live set stops
// being the peak's. Cost is O(1) amortised per event however often the peak moves.
#pragma once

#include "analysis/moment_sampler.h"
#include "analysis/site_timeline.h"
#include "analysis/timeline.h"
#include "base/flat_map.h"

#include <gpumemtrace/format/event.h>

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

namespace gmt::analyzer {

// What one allocation contributes: where it lives and who made it.
struct Charge {
    uint32_t process = 0;
    uint32_t stack = 0;
    int device = -1;
    format::Kind kind = format::Kind::None;
    bool resident = true; // device memory (not pinned host, not a host-located VMM handle)
    uint64_t bytes = 0;
    // The (process, stack) counter's index when the caller knows it (what add() returned
    // for this allocation); kNoSite: look it up.
    uint32_t site = UINT32_MAX;
};
inline constexpr uint32_t kNoSite = UINT32_MAX;

// How a (process, stack) counter moved over the whole run: what the growth analysis
// (growth_analysis.h) uses to choose iteration boundaries and the sites worth following.
struct SiteHistory {
    uint64_t allocations = 0; // resident allocations made there
    uint64_t first_ns = 0;    // the first of them
    uint64_t last_ns = 0;     // the last
    uint64_t max_bytes = 0;   // its most live bytes
    uint64_t new_maxima = 0;  // times its live bytes rose above every earlier level
    uint64_t last_max_ns = 0; // the last of those
};

// Told of every change to a (process, stack) counter (the growth pass attaches one).
class SiteObserver {
  public:
    virtual ~SiteObserver() = default;
    virtual void onCharge(const Charge& c, bool added, uint64_t time_ns) = 0;
};

struct PeakPoint {
    uint64_t bytes = 0;
    uint64_t time_ns = 0;
};

// What the HTML view needs beyond the text report (0: not kept; the default).
struct AccountingDetail {
    size_t kind_timeline_points = 0; // buckets per device of the by-kind timelines
    size_t moments = 0;              // moments sampled (moment_sampler.h)
    size_t moment_sites = 0;         // stacks kept per moment
    size_t site_timeline_points = 0; // buckets per device of the by-site timelines
    size_t site_timeline_sites = 0;  // sites kept per moment of those (site_timeline.h)
};

class LiveAccounting {
  public:
    explicit LiveAccounting(size_t timeline_points, AccountingDetail detail = {});
    ~LiveAccounting();

    // add returns the index of the allocation's site counter (kNoSite when it is not
    // resident), to pass back in Charge::site when it is removed.
    uint32_t add(const Charge& c, uint64_t time_ns);
    // `allocations` made and freed at c's site, c.bytes in all, that were never replayed
    // (an aggregated trace folded them): they count in what the site allocated only.
    void addFolded(const Charge& c, uint64_t allocations);
    void remove(const Charge& c, uint64_t time_ns);
    // Many removals at one moment (a teardown, a process's end): between these, removals
    // leave no timeline points; the end records each device's final level once, so the
    // timeline shows the drop rather than its intermediate states.
    void beginRemovals() { batch_ = true; }
    void endRemovals(uint64_t time_ns);
    // Takes the pending peak snapshot, if any (call at the end of the analysis).
    void settle() {
        if (pending_) {
            snapshot();
        }
    }

    // Called when the peak snapshot is taken: the live set is exactly the peak's.
    void onPeakSnapshot(std::function<void(const PeakPoint&)> callback) {
        on_snapshot_ = std::move(callback);
    }

    uint64_t liveBytes() const { return total_; }
    // Device-resident bytes one process holds now.
    uint64_t processLive(uint32_t process) const {
        return process < process_live_.size() ? process_live_[process] : 0;
    }
    // One process's own device-resident bytes at most, over all devices and per device
    // (what a per-rank table shows, whatever other processes held at the same time).
    uint64_t processPeak(uint32_t process) const {
        return process < process_peak_.size() ? process_peak_[process] : 0;
    }
    struct ProcessDevice {
        int device = 0;
        uint64_t live = 0;
        uint64_t peak = 0;
    };
    const std::vector<ProcessDevice>& processDevices(uint32_t process) const {
        static const std::vector<ProcessDevice> none;
        return process < process_devices_.size() ? process_devices_[process] : none;
    }
    const PeakPoint& peak() const { return peak_; }
    uint64_t deviceLive(int device) const;
    const std::map<int, PeakPoint>& devicePeaks() const { return device_peak_; }
    const PeakPoint& kindPeak(format::Kind k) const { return kind_peak_[index(k)]; }
    // (process << 32 | stack) -> live at the peak, for sites with bytes there.
    std::vector<std::pair<uint64_t, SiteLive>> peakSites() const;
    const std::map<int, Timeline>& timelines() const { return timelines_; }
    // Every (process << 32 | stack) counter's history, in no particular order.
    template <typename F> void forEachSiteHistory(F&& f) const {
        for (const Site& s : sites_) {
            f(s.key, s.history);
        }
    }
    void setObserver(SiteObserver* observer) { observer_ = observer; }
    // By kind, per device; pinned host memory (every device's) under kHostDevice.
    const std::map<int, KindTimeline>& kindTimelines() const { return kind_timelines_; }
    // Device-resident bytes by (process << 32 | stack), per device; empty unless
    // AccountingDetail::site_timeline_points.
    const std::map<int, SiteTimeline>& siteTimelines() const { return site_timelines_; }
    static constexpr int kHostDevice = -1;
    // Empty unless AccountingDetail::moments.
    std::vector<LiveMoment> moments() const;
    // (process << 32 | stack) -> every allocation made there (any kind), for sites with one.
    std::vector<std::pair<uint64_t, SiteLive>> allocatedSites() const;

  private:
    struct Site {
        uint64_t key = 0; // process << 32 | stack
        SiteLive now;
        SiteLive at_peak;
        SiteLive allocated; // every allocation ever made here, resident or not
        bool dirty = false;
        SiteHistory history;
        uint32_t live_slot = UINT32_MAX; // index in live_sites_ while it holds memory
    };
    // The per-device counters of the device last charged (std::map nodes do not move).
    struct DeviceSlot {
        int device = 0;
        bool valid = false;
        uint64_t* live = nullptr;
        PeakPoint* peak = nullptr; // created by add() only, as device_peak_[] was
        Timeline* timeline = nullptr;
        KindLevels* kinds = nullptr;           // the device's live bytes by kind
        KindTimeline* kind_timeline = nullptr; // null unless kept
        SiteTimeline* site_timeline = nullptr; // null unless kept
    };
    static size_t index(format::Kind k) {
        auto i = static_cast<size_t>(k);
        return i < kKindCount ? i : 0;
    }
    // The per-event helpers are inline, their rare cases out of line.
    uint32_t siteIndex(const Charge& c) {
        if (c.site != kNoSite) {
            return c.site;
        }
        // A new allocation: its site is most often one of a few recent ones.
        const uint64_t key = (uint64_t{c.process} << 32) | c.stack;
        const SiteCacheEntry& hit = site_cache_[(c.stack ^ c.process) % kSiteCache];
        return hit.index != kNoSite && hit.key == key ? hit.index : findSite(key);
    }
    uint32_t findSite(uint64_t key);
    Site& touch(uint32_t index) {
        Site& s = sites_[index];
        if (!s.dirty) {
            s.dirty = true;
            dirty_.push_back(index);
        }
        return s;
    }
    DeviceSlot& deviceSlot(int device) {
        return device_slot_.valid && device_slot_.device == device ? device_slot_
                                                                   : switchDevice(device);
    }
    DeviceSlot& switchDevice(int device);
    void snapshot();
    void sampleMoment(uint64_t time_ns) {
        if (moments_) {
            sampleMomentNow(time_ns);
        }
    }
    void sampleMomentNow(uint64_t time_ns);
    // The device's level in the by-kind and by-site timelines, when kept.
    void recordDetail(DeviceSlot& d, uint64_t time_ns) {
        if (d.kind_timeline) {
            d.kind_timeline->record(time_ns, *d.kinds);
        }
        if (d.site_timeline) {
            d.site_timeline->record(time_ns, *d.live);
        }
    }
    void recordHost(uint64_t time_ns);

    size_t timeline_points_;
    AccountingDetail detail_;
    uint64_t total_ = 0;
    PeakPoint peak_;
    bool pending_ = false;
    std::vector<uint64_t> process_live_;
    std::vector<uint64_t> process_peak_;
    std::vector<std::vector<ProcessDevice>> process_devices_; // a few devices per process
    // Inline: every resident allocation and free updates it, mostly for the (process,
    // device) of the last; a search of the process's list only when that changes.
    ProcessDevice& processDevice(uint32_t process, int device) {
        return last_pd_ && last_pd_process_ == process && last_pd_->device == device
                   ? *last_pd_
                   : findProcessDevice(process, device);
    }
    ProcessDevice& findProcessDevice(uint32_t process, int device);
    // The entry processDevice() returned last; reset whenever a list grows (it may move).
    ProcessDevice* last_pd_ = nullptr;
    uint32_t last_pd_process_ = 0;
    std::map<int, uint64_t> device_live_;
    std::map<int, PeakPoint> device_peak_;
    std::array<uint64_t, kKindCount> kind_live_{};
    std::array<PeakPoint, kKindCount> kind_peak_{};
    FlatMap<uint32_t> site_index_; // key -> index in sites_
    struct SiteCacheEntry {
        uint64_t key = 0;
        uint32_t index = kNoSite;
    };
    static constexpr size_t kSiteCache = 256;
    std::array<SiteCacheEntry, kSiteCache> site_cache_{}; // of site_index_, by stack
    std::vector<Site> sites_;
    std::vector<uint32_t> dirty_;
    DeviceSlot device_slot_;
    std::map<int, Timeline> timelines_;
    std::map<int, KindLevels> device_kinds_;
    std::map<int, KindTimeline> kind_timelines_;
    std::map<int, SiteTimeline> site_timelines_;
    std::vector<uint32_t> live_sites_; // sites holding memory now
    std::unique_ptr<MomentSampler> moments_;
    std::function<void(const PeakPoint&)> on_snapshot_;
    SiteObserver* observer_ = nullptr;
    bool batch_ = false;
    bool host_changed_ = false;      // pinned host memory ended in the batch
    std::vector<int> batch_devices_; // devices whose level changed in the batch
};

} // namespace gmt::analyzer
