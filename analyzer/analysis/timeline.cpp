#include "analysis/timeline.h"

#include <numeric>

namespace gmt::analyzer {

Timeline::Timeline(size_t max_points) : series_(max_points) {}

std::vector<std::pair<uint64_t, uint64_t>> Timeline::points() const {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (const Bucket& b : series_.buckets()) {
        out.emplace_back(b.time_ns, b.bytes);
    }
    return out;
}

KindTimeline::KindTimeline(size_t max_buckets) : series_(max_buckets) {}

void KindTimeline::record(uint64_t time_ns, const KindLevels& levels) {
    const Sample s{time_ns, std::accumulate(levels.begin(), levels.end(), uint64_t{0}), levels};
    series_.add(time_ns, Bucket{s, s});
}

std::vector<KindTimeline::Sample> KindTimeline::samples() const {
    std::vector<Sample> out;
    for (const Bucket& b : series_.buckets()) {
        appendLowAndHigh(b.low, b.high, out);
    }
    return out;
}

} // namespace gmt::analyzer
