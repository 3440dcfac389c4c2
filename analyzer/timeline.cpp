#include "timeline.h"

#include <algorithm>

namespace gmt::analyzer {

Timeline::Timeline(size_t max_points) : max_points_(std::max<size_t>(max_points, 1)) {}

void Timeline::halve() {
    std::vector<Bucket> merged((buckets_.size() + 1) / 2);
    for (size_t i = 0; i < buckets_.size(); ++i) {
        const Bucket& b = buckets_[i];
        Bucket& m = merged[i / 2];
        if (b.used && (!m.used || b.bytes > m.bytes)) {
            m = b;
        }
    }
    buckets_ = std::move(merged);
    width_ *= 2;
    ++width_shift_;
}

void Timeline::record(uint64_t time_ns, uint64_t bytes) {
    if (!started_) {
        started_ = true;
        origin_ = time_ns;
    }
    // Threads stamp their own calls, so a slightly older time can follow a newer one.
    uint64_t offset = time_ns > origin_ ? time_ns - origin_ : 0;
    // width_ is a power of two, so offset / width_ is a shift.
    uint64_t slot = offset >> width_shift_;
    while (slot >= max_points_ && width_ <= UINT64_MAX / 2) {
        halve();
        slot = offset >> width_shift_;
    }
    size_t index = static_cast<size_t>(std::min<uint64_t>(slot, max_points_ - 1));
    if (index >= buckets_.size()) {
        buckets_.resize(index + 1);
    }
    Bucket& b = buckets_[index];
    if (!b.used || bytes > b.bytes) {
        b = Bucket{time_ns, bytes, true};
    }
}

std::vector<std::pair<uint64_t, uint64_t>> Timeline::points() const {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (const Bucket& b : buckets_) {
        if (b.used) {
            out.emplace_back(b.time_ns, b.bytes);
        }
    }
    return out;
}

} // namespace gmt::analyzer
