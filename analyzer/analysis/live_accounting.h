// Live-byte bookkeeping across every traced process: the device-resident total and its
// peak, per device, per kind, per allocation stack, and the timelines.
//
// Top sites at the peak are captured cheaply: every stack counter changed since the last
// snapshot is on a dirty list, and the snapshot (copying only those) is taken lazily,
// just before the first decrease after a new maximum — the moment the live set stops
// being the peak's. Cost is O(1) amortised per event however often the peak moves.
#pragma once

#include "analysis/accounting_thread.h"
#include "analysis/charge.h"
#include "analysis/live_totals.h"
#include "analysis/moment_sampler.h"
#include "analysis/site_timeline.h"
#include "analysis/timeline.h"
#include "base/flat_map.h"
#include "base/saturating.h"

#include <gpumemtrace/format/event.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

namespace gmt::analyzer {

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
    // resident), to pass back in Charge::site when it is removed. add and remove are
    // inline (below the class): every allocation and free comes through them, and a
    // call's entry and exit cost as much as some of the levels they update. They take the
    // charge by value, a copy of the caller's that the compiler may keep in registers.
    // On a thread of its own (startThread()), add returns kNoSite: the removal finds the
    // site itself.
    uint32_t add(Charge c, uint64_t time_ns);
    // `allocations` made and freed at c's site, c.bytes in all, that were never replayed
    // (an aggregated trace folded them): they count in what the site allocated only.
    void addFolded(const Charge& c, uint64_t allocations) {
        if (!defer(c, ChargeOp::Type::AddFolded, allocations)) {
            applyAddFolded(c, allocations);
        }
    }
    void remove(Charge c, uint64_t time_ns);
    // Many removals at one moment (a teardown, a process's end): between these, removals
    // leave no timeline points; the end records each device's final level once, so the
    // timeline shows the drop rather than its intermediate states.
    void beginRemovals() {
        if (!defer({}, ChargeOp::Type::BeginRemovals, 0)) {
            applyBeginRemovals();
        }
    }
    void endRemovals(uint64_t time_ns) {
        if (!defer({}, ChargeOp::Type::EndRemovals, time_ns)) {
            applyEndRemovals(time_ns);
        }
    }
    // Takes the pending peak snapshot, if any (call at the end of the analysis). One branch
    // when nothing is pending: every free comes through here (Lifetimes::gate()).
    void settle() {
        if (!deferred_) {
            applySettle();
        } else if (deferred_->totals.settle()) {
            defer({}, ChargeOp::Type::Settle, 0);
        }
    }

    // The accounting on a thread of its own (accounting_thread.h) from now on, until
    // stopThread(): the same results, read after stopThread() (all but processLive(), kept
    // on the caller's thread too). Call it before the first charge, after onPeakSnapshot():
    // the callback is then called on the caller's thread, at the same moments. Where no
    // thread can be started, the accounting stays on the caller's.
    void startThread();
    // Waits until the thread has applied every charge, and ends it; rethrows what applying
    // one threw. Nothing when there is no thread.
    void stopThread();

    // Called when the peak snapshot is taken: the live set is exactly the peak's.
    void onPeakSnapshot(std::function<void(const PeakPoint&)> callback) {
        on_snapshot_ = std::move(callback);
    }

    uint64_t liveBytes() const { return total_; }
    // Device-resident bytes one process holds now.
    uint64_t processLive(uint32_t process) const {
        if (deferred_) {
            return deferred_->totals.processLive(process);
        }
        if (process == derived_process_) {
            return total_;
        }
        return process < process_live_.size() ? process_live_[process] : 0;
    }
    // One process's own device-resident bytes at most, over all devices and per device
    // (what a per-rank table shows, whatever other processes held at the same time).
    uint64_t processPeak(uint32_t process) const {
        if (process == derived_process_) {
            return peak_.bytes;
        }
        return process < process_peak_.size() ? process_peak_[process] : 0;
    }
    struct ProcessDevice {
        int device = 0;
        uint64_t live = 0;
        uint64_t peak = 0;
    };
    // A copy: read once per report, and the derived process's list is made on request.
    std::vector<ProcessDevice> processDevices(uint32_t process) const;
    const PeakPoint& peak() const { return peak_; }
    uint64_t deviceLive(int device) const;
    const std::map<int, PeakPoint>& devicePeaks() const { return device_peak_; }
    const PeakPoint& kindPeak(format::Kind k) const { return kind_peak_[kindIndex(k)]; }
    // (process << 32 | stack) -> live at the peak, for sites with bytes there.
    std::vector<std::pair<uint64_t, SiteLive>> peakSites() const;
    const std::map<int, Timeline>& timelines() const { return timelines_; }
    // Every (process << 32 | stack) counter's history, in no particular order.
    template <typename F> void forEachSiteHistory(F&& f) const {
        for (const Site& s : sites_) {
            f(s.key, s.history);
        }
    }
    // An observer is told on the caller's thread: the thread (if any) stops first.
    void setObserver(SiteObserver* observer) {
        if (observer) {
            stopThread();
        }
        observer_ = observer;
    }
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
    friend class AccountingThread;
    // What add(), remove() and the rest do, here and now: on the caller's thread, or on the
    // accounting's own, which calls them.
    uint32_t applyAdd(Charge c, uint64_t time_ns);
    void applyAddFolded(const Charge& c, uint64_t allocations);
    void applyRemove(Charge c, uint64_t time_ns);
    void applyBeginRemovals() { batch_ = true; }
    void applyEndRemovals(uint64_t time_ns);
    // Hands the operation to the accounting's thread, when it has one (false: apply it here).
    bool defer(const Charge& c, ChargeOp::Type type, uint64_t value) {
        if (!deferred_) {
            return false;
        }
        deferred_->thread.push(c, type, value);
        return true;
    }
    void applySettle() {
        if (pending_) {
            snapshot();
        }
    }

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
        // The device, or a value no device has (none charged yet): one comparison tells.
        int64_t device = INT64_MIN;
        uint64_t* live = nullptr;
        PeakPoint* peak = nullptr; // created by add() only, as device_peak_[] was
        Timeline* timeline = nullptr;
        KindLevels* kinds = nullptr;           // the device's live bytes by kind
        KindTimeline* kind_timeline = nullptr; // null unless kept
        SiteTimeline* site_timeline = nullptr; // null unless kept
    };
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
    // Marks the site changed since the peak snapshot; most often it already is.
    [[gnu::always_inline]] Site& touch(uint32_t index) {
        Site& s = sites_[index];
        if (!s.dirty) {
            markDirty(index);
        }
        return s;
    }
    void markDirty(uint32_t index);
    DeviceSlot& deviceSlot(int device) {
        return device_slot_.device == device ? device_slot_ : switchDevice(device);
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
    // The by-kind level and its peak: device-resident memory and pinned host memory.
    void addToKind(size_t k, uint64_t bytes, uint64_t time_ns) {
        addSaturating(kind_live_[k], bytes);
        if (kind_live_[k] > kind_peak_[k].bytes) {
            kind_peak_[k] = {kind_live_[k], time_ns};
        }
    }
    // The rare cases of add() and remove(), out of line: memory that is not device-resident
    // (pinned host memory, a host-located handle), a process seen for the first time, a
    // removal inside a batch. The charge by value, as notify() takes it (below).
    void addElsewhere(Charge c, uint64_t time_ns);
    void removeElsewhere(Charge c, uint64_t time_ns);
    void addProcess(uint32_t process);
    // Gives process 0 levels of its own, from the totals it was derived from until now (a
    // charge of another process has come).
    void separateProcesses();
    // Out of line, with its own copy of the charge: were the caller's charge passed by
    // reference, the inlined add() or remove() would have to build it in memory first.
    void notify(Charge c, bool added, uint64_t time_ns);
    void noteBatchDevice(int device);

    size_t timeline_points_;
    AccountingDetail detail_;
    uint64_t total_ = 0;
    PeakPoint peak_;
    bool pending_ = false;
    std::vector<uint64_t> process_live_;
    std::vector<uint64_t> process_peak_;
    std::vector<std::vector<ProcessDevice>> process_devices_; // a few devices per process
    // While every resident charge is process 0's (one trace: nearly every report), its
    // levels are the totals' own: its live bytes total_, its peak peak_, its per-device
    // levels the devices' (in device_order_), so add() and remove() skip them. The same
    // saturating steps applied to the same charges give the same values. Then
    // kNoDerivedProcess: each process keeps its own.
    static constexpr uint32_t kNoDerivedProcess = UINT32_MAX;
    uint32_t derived_process_ = 0;
    std::vector<int> device_order_; // as first charged
    // Inline: every resident allocation and free updates it, mostly for the (process,
    // device) of the last; a search of the process's list only when that changes.
    ProcessDevice& processDevice(uint32_t process, int device) {
        return last_pd_key_ == processDeviceKey(process, device)
                   ? *last_pd_
                   : findProcessDevice(process, device);
    }
    static uint64_t processDeviceKey(uint32_t process, int device) {
        return (uint64_t{process} << 32) | static_cast<uint32_t>(device);
    }
    ProcessDevice& findProcessDevice(uint32_t process, int device);
    // The entry processDevice() returned last and its key; the key is reset whenever a list
    // grows (the entry may move) to one no (process, device) has: a process's index is
    // below the number of traces, never UINT32_MAX.
    static constexpr uint64_t kNoProcessDevice = UINT64_MAX;
    ProcessDevice* last_pd_ = nullptr;
    uint64_t last_pd_key_ = kNoProcessDevice;
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
    // While the accounting runs on a thread of its own: what the caller's thread keeps, and
    // the thread. The totals first: the thread ends before them.
    struct Deferred {
        explicit Deferred(LiveAccounting& accounting);
        LiveTotals totals;
        AccountingThread thread;
    };
    SiteObserver* observer_ = nullptr;
    bool batch_ = false;
    bool host_changed_ = false;      // pinned host memory ended in the batch
    std::vector<int> batch_devices_; // devices whose level changed in the batch
    // Last, on a cache line of its own (the class's size rounds up to it): the caller's
    // thread reads it at every charge while the accounting's thread writes the members
    // before it. Sharing their line, each read waited for the other core's write.
    alignas(64) std::unique_ptr<Deferred> deferred_;
};

[[gnu::always_inline]] inline uint32_t LiveAccounting::applyAdd(Charge c, uint64_t time_ns) {
    if (!c.resident) {
        addElsewhere(c, time_ns);
        return kNoSite;
    }
    const size_t k = kindIndex(c.kind);
    addToKind(k, c.bytes, time_ns);
    sampleMoment(time_ns);
    if (c.process != derived_process_) [[unlikely]] {
        if (derived_process_ != kNoDerivedProcess) {
            separateProcesses();
        }
        if (c.process >= process_live_.size()) {
            addProcess(c.process);
        }
        addSaturating(process_live_[c.process], c.bytes);
        process_peak_[c.process] = std::max(process_peak_[c.process], process_live_[c.process]);
        ProcessDevice& pd = processDevice(c.process, c.device);
        addSaturating(pd.live, c.bytes);
        pd.peak = std::max(pd.peak, pd.live);
    }
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
        notify(c, true, time_ns);
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
        device_order_.push_back(c.device);
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

[[gnu::always_inline]] inline uint32_t LiveAccounting::add(Charge c, uint64_t time_ns) {
    if (deferred_) {
        deferred_->totals.add(c, time_ns);
        defer(c, ChargeOp::Type::Add, time_ns);
        return kNoSite;
    }
    return applyAdd(c, time_ns);
}

[[gnu::always_inline]] inline void LiveAccounting::remove(Charge c, uint64_t time_ns) {
    if (deferred_) {
        deferred_->totals.remove(c);
        defer(c, ChargeOp::Type::Remove, time_ns);
        return;
    }
    applyRemove(c, time_ns);
}

[[gnu::always_inline]] inline void LiveAccounting::applyRemove(Charge c, uint64_t time_ns) {
    if (!c.resident) {
        removeElsewhere(c, time_ns);
        return;
    }
    const size_t k = kindIndex(c.kind);
    subtractSaturating(kind_live_[k], c.bytes);
    applySettle();
    sampleMoment(time_ns);
    if (c.process != derived_process_ && c.process < process_live_.size()) [[unlikely]] {
        subtractSaturating(process_live_[c.process], c.bytes);
        subtractSaturating(processDevice(c.process, c.device).live, c.bytes);
    }
    const uint32_t site = siteIndex(c);
    Site& s = touch(site);
    subtractSaturating(s.now.bytes, c.bytes);
    s.now.allocations -= std::min<uint64_t>(s.now.allocations, 1);
    if (observer_) {
        notify(c, false, time_ns);
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
    subtractSaturating((*d.kinds)[k], c.bytes);
    if (!batch_) {
        d.timeline->record(time_ns, dev);
        recordDetail(d, time_ns);
    } else {
        noteBatchDevice(c.device);
    }
    subtractSaturating(total_, c.bytes);
}

} // namespace gmt::analyzer
