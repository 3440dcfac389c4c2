#include "timeline.h"

#include <numeric>

namespace gmt::analyzer {

Timeline::Timeline(size_t max_points) : series_(max_points) {}

void Timeline::record(uint64_t time_ns, uint64_t bytes) {
    auto keepHigher = [](Bucket& into, const Bucket& from) {
        if (from.used && (!into.used || from.bytes > into.bytes)) {
            into = from;
        }
    };
    Bucket& b = series_.at(time_ns, keepHigher);
    keepHigher(b, Bucket{time_ns, bytes, true});
}

std::vector<std::pair<uint64_t, uint64_t>> Timeline::points() const {
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (const Bucket& b : series_.buckets()) {
        if (b.used) {
            out.emplace_back(b.time_ns, b.bytes);
        }
    }
    return out;
}

KindTimeline::KindTimeline(size_t max_buckets) : series_(max_buckets) {}

void KindTimeline::record(uint64_t time_ns, const KindLevels& levels) {
    auto fold = [](Bucket& into, const Bucket& from) {
        if (!from.used) {
            return;
        }
        if (!into.used) {
            into = from;
            return;
        }
        if (from.high.total > into.high.total) {
            into.high = from.high;
        }
        if (from.low.total < into.low.total) {
            into.low = from.low;
        }
    };
    Sample s{time_ns, std::accumulate(levels.begin(), levels.end(), uint64_t{0}), levels};
    fold(series_.at(time_ns, fold), Bucket{true, s, s});
}

std::vector<KindTimeline::Sample> KindTimeline::samples() const {
    std::vector<Sample> out;
    for (const Bucket& b : series_.buckets()) {
        if (!b.used) {
            continue;
        }
        const bool same = b.low.time_ns == b.high.time_ns && b.low.total == b.high.total;
        const Sample& first = b.low.time_ns <= b.high.time_ns ? b.low : b.high;
        const Sample& second = &first == &b.low ? b.high : b.low;
        out.push_back(first);
        if (!same) {
            out.push_back(second);
        }
    }
    return out;
}

} // namespace gmt::analyzer
