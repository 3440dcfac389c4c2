#include "analysis/site_timeline.h"

#include "base/saturating.h"

#include <algorithm>

namespace gmt::analyzer {

SiteTimeline::SiteTimeline(size_t max_buckets, size_t kept) : series_(max_buckets), kept_(kept) {}

void SiteTimeline::change(uint64_t site, uint64_t bytes, bool added) {
    uint64_t* live = live_.find(site);
    const uint64_t before = live ? *live : 0;
    uint64_t after = before;
    if (added) {
        addSaturating(after, bytes);
    } else {
        subtractSaturating(after, bytes);
    }
    if (after == before) {
        return;
    }
    if (before > 0) {
        // Re-keyed in place: the node is reused, no allocation per event.
        auto node = order_.extract({before, site});
        if (after > 0) {
            node.value().first = after;
            order_.insert(std::move(node));
        }
    } else {
        order_.emplace(after, site);
    }
    if (after > 0) {
        *(live ? live : live_.tryEmplace(site).first) = after;
    } else {
        live_.erase(site);
    }
}

void SiteTimeline::fill(Sample& s, uint64_t time_ns, uint64_t total) const {
    s.time_ns = time_ns;
    s.total = total;
    s.top.clear();
    for (auto it = order_.rbegin(); it != order_.rend() && s.top.size() < kept_; ++it) {
        s.top.emplace_back(it->second, it->first);
    }
}

void SiteTimeline::record(uint64_t time_ns, uint64_t total) {
    Bucket& b = series_.at(time_ns);
    // A tie keeps the earlier moment, as the by-kind timeline does.
    if (!b.used || total > b.high.total) {
        fill(b.high, time_ns, total);
    }
    if (!b.used || total < b.low.total) {
        fill(b.low, time_ns, total);
    }
    b.used = true;
}

std::vector<SiteTimeline::Sample> SiteTimeline::samples() const {
    std::vector<Sample> out;
    for (const Bucket& b : series_.buckets()) {
        if (!b.used) {
            continue;
        }
        appendLowAndHigh(b.low, b.high, out);
    }
    return out;
}

} // namespace gmt::analyzer
