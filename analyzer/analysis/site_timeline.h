// One device's live bytes by allocation site over time, in bounded memory: the HTML
// report's timeline stacked by the sites that held the most (docs/analysis.md, "Detail").
// Time is cut into buckets as the by-kind timeline's are (timeline.h), and each bucket
// keeps two moments, its lowest and its highest total, with the `kept` largest sites at
// each. The sites are kept ordered by their live bytes on the device, so a moment's
// largest sites cost `kept` steps whatever the number of live sites, and an event costs
// O(log live sites). Which sites the report draws is chosen only at the end, from the
// moments kept: the ones with the most bytes at any of them.
#pragma once

#include "analysis/timeline.h"
#include "base/flat_map.h"

#include <cstddef>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace gmt::analyzer {

class SiteTimeline {
  public:
    struct Sample {
        uint64_t time_ns = 0;
        uint64_t total = 0; // the device's live bytes then
        // (process << 32 | stack, live bytes on this device), largest first.
        std::vector<std::pair<uint64_t, uint64_t>> top;
    };

    SiteTimeline(size_t max_buckets, size_t kept);

    // A site's live bytes on this device rose (`added`) or fell by `bytes`.
    void change(uint64_t site, uint64_t bytes, bool added);
    // The device's total after the changes at time_ns.
    void record(uint64_t time_ns, uint64_t total);

    // In time order, at most two per bucket (one when its extremes are the same moment).
    std::vector<Sample> samples() const;

  private:
    struct Bucket {
        bool used = false;
        Sample low, high;
        static void fold(Bucket& into, const Bucket& from) {
            if (!from.used) {
                return;
            }
            if (!into.used || from.high.total > into.high.total) {
                into.high = from.high;
            }
            if (!into.used || from.low.total < into.low.total) {
                into.low = from.low;
            }
            into.used = true;
        }
    };
    void fill(Sample& s, uint64_t time_ns, uint64_t total) const;

    BucketedSeries<Bucket> series_;
    size_t kept_;
    FlatMap<uint64_t> live_;                        // site -> live bytes on this device
    std::set<std::pair<uint64_t, uint64_t>> order_; // (live bytes, site) of sites holding some
};

} // namespace gmt::analyzer
