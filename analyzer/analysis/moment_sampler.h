// What was live at moments spread over the whole run, grouped by allocation stack, in
// bounded memory: the run is cut into at most `max_moments` buckets of time (doubling in
// width as the trace grows, as the timeline's do), and each bucket keeps the live set that
// held the most bytes among those that ended in it (sampled right before the change that
// ended it), as the timeline keeps maxima; merging two buckets keeps the larger sample. So
// the peak's live set is a sample. A sample walks the stacks holding memory, so one is
// taken only when the changes since the last one pay for the walk (kWalkStepsPerChange
// sites per change) or the set is small: the cost per event stays bounded however many
// stacks are live, and a live set whose walk is not paid for is not sampled.
#pragma once

#include "analysis/timeline.h"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gmt::analyzer {

struct SiteLive {
    uint64_t bytes = 0;
    uint64_t allocations = 0;
};

struct LiveMoment {
    uint64_t time_ns = 0;  // the live set is the one the change at time_ns left...
    uint64_t until_ns = 0; // ...and it lasted until the next change, at until_ns
    uint64_t bytes = 0;    // device-resident, every process and device
    uint64_t sites = 0;    // (process, stack) pairs holding memory then
    std::vector<std::pair<uint64_t, SiteLive>> top; // (process << 32 | stack), largest first
};

class MomentSampler {
  public:
    MomentSampler(size_t max_moments, size_t top_sites);

    // Before a change of the live set at time_ns, with `live_bytes` in `live_sites` stacks:
    // true when the live set as it is now should be sampled (then call take()).
    bool due(uint64_t time_ns, uint64_t live_bytes, size_t live_sites);
    // The sample due() asked for; `top` need not be sorted or cut.
    void take(uint64_t bytes, uint64_t sites, std::vector<std::pair<uint64_t, SiteLive>> top);

    size_t topSites() const { return top_sites_; }
    // In time order.
    std::vector<LiveMoment> moments() const;

  private:
    struct Bucket {
        bool used = false;
        LiveMoment moment;
        // Neighbours merged: the larger moment stays.
        static void fold(Bucket& into, const Bucket& from) {
            if (from.used && (!into.used || from.moment.bytes > into.moment.bytes)) {
                into = from;
            }
        }
    };
    BucketedSeries<Bucket> series_;
    size_t top_sites_;
    bool have_previous_ = false;
    uint64_t previous_ns_ = 0;     // the last change
    uint64_t pending_ns_ = 0;      // the change due() said to sample before
    uint64_t pending_from_ns_ = 0; // the change that made the live set sampled
    Bucket* pending_ = nullptr;
    uint64_t changes_since_sample_ = 0;
};

} // namespace gmt::analyzer
