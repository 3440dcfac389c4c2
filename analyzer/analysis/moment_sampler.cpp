#include "analysis/moment_sampler.h"

#include <algorithm>

namespace gmt::analyzer {

namespace {
constexpr size_t kCheapSiteCount = 64;
constexpr uint64_t kWalkStepsPerChange = 8;
} // namespace

MomentSampler::MomentSampler(size_t max_moments, size_t top_sites)
    : series_(max_moments), top_sites_(top_sites) {}

bool MomentSampler::due(uint64_t time_ns, uint64_t live_bytes, size_t live_sites) {
    ++changes_since_sample_;
    const bool had_previous = have_previous_;
    const uint64_t previous = previous_ns_;
    have_previous_ = true;
    previous_ns_ = std::max(previous_ns_, time_ns);
    if (!had_previous) {
        return false; // nothing was live before the first change
    }
    Bucket& b = series_.at(time_ns);
    if (b.used && b.moment.bytes >= live_bytes) {
        return false;
    }
    if (live_sites > kCheapSiteCount && changes_since_sample_ * kWalkStepsPerChange < live_sites) {
        return false;
    }
    pending_ = &b;
    pending_ns_ = time_ns;
    pending_from_ns_ = previous;
    return true;
}

void MomentSampler::take(uint64_t bytes, uint64_t sites,
                         std::vector<std::pair<uint64_t, SiteLive>> top) {
    if (!pending_) {
        return;
    }
    auto larger = [](const auto& a, const auto& b) {
        return a.second.bytes != b.second.bytes ? a.second.bytes > b.second.bytes
                                                : a.first < b.first;
    };
    if (top.size() > top_sites_) {
        std::nth_element(top.begin(), top.begin() + static_cast<ptrdiff_t>(top_sites_), top.end(),
                         larger);
        top.resize(top_sites_);
    }
    std::sort(top.begin(), top.end(), larger);
    LiveMoment& m = pending_->moment;
    m.time_ns = pending_from_ns_;
    m.until_ns = pending_ns_;
    m.bytes = bytes;
    m.sites = sites;
    m.top = std::move(top);
    pending_->used = true;
    pending_ = nullptr;
    changes_since_sample_ = 0;
}

std::vector<LiveMoment> MomentSampler::moments() const {
    std::vector<LiveMoment> out;
    for (const Bucket& b : series_.buckets()) {
        if (b.used) {
            out.push_back(b.moment);
        }
    }
    return out;
}

} // namespace gmt::analyzer
