#include "timeline.h"

#include <algorithm>

namespace gmt::analyzer {

namespace {

// Merges runs of equal index in an index-sorted vector: the largest value stays, the
// first one on a tie.
template <typename B> void mergeEqual(std::vector<B>& v) {
    size_t out = 0;
    for (size_t i = 0; i < v.size(); ++i) {
        if (out > 0 && v[out - 1].index == v[i].index) {
            if (v[i].bytes > v[out - 1].bytes) {
                v[out - 1] = v[i];
            }
        } else {
            v[out++] = v[i];
        }
    }
    v.resize(out);
}

} // namespace

Timeline::Timeline(size_t max_points)
    : max_points_(std::clamp<size_t>(max_points, 1, kMaxTimelinePoints)) {}

void Timeline::compact() {
    if (sorted_ == buckets_.size()) {
        return;
    }
    std::stable_sort(buckets_.begin(), buckets_.end(),
                     [](const Bucket& a, const Bucket& b) { return a.index < b.index; });
    mergeEqual(buckets_);
    sorted_ = buckets_.size();
}

void Timeline::halve() {
    compact();
    for (Bucket& b : buckets_) {
        b.index /= 2;
    }
    mergeEqual(buckets_);
    sorted_ = buckets_.size();
    ++width_shift_;
}

void Timeline::record(uint64_t time_ns, uint64_t bytes) {
    if (!started_) {
        started_ = true;
        origin_ = time_ns;
    }
    // Threads stamp their own calls, so a slightly older time can follow a newer one.
    uint64_t offset = time_ns > origin_ ? time_ns - origin_ : 0;
    uint64_t slot = offset >> width_shift_;
    while (slot >= max_points_ && width_shift_ < 63) {
        halve();
        slot = offset >> width_shift_;
    }
    const uint64_t index = std::min<uint64_t>(slot, max_points_ - 1);
    if (!buckets_.empty() && buckets_.back().index == index) {
        Bucket& b = buckets_.back();
        if (bytes > b.bytes) {
            b.time_ns = time_ns;
            b.bytes = bytes;
        }
        return;
    }
    const bool in_order =
        sorted_ == buckets_.size() && (buckets_.empty() || buckets_.back().index < index);
    buckets_.push_back(Bucket{index, time_ns, bytes});
    if (in_order) {
        sorted_ = buckets_.size();
    } else if (buckets_.size() >= 2 * max_points_ + 16) {
        compact(); // at most max_points_ remain: out-of-order times cost O(log) each
    }
}

std::vector<std::pair<uint64_t, uint64_t>> Timeline::points() const {
    Timeline copy = *this;
    copy.compact();
    std::vector<std::pair<uint64_t, uint64_t>> out;
    out.reserve(copy.buckets_.size());
    for (const Bucket& b : copy.buckets_) {
        out.emplace_back(b.time_ns, b.bytes);
    }
    return out;
}

} // namespace gmt::analyzer
