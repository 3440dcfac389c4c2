// Live bytes over time in bounded memory. The trace length is unknown while streaming,
// so buckets start narrow and double in width (merging neighbours) whenever they would
// exceed the point budget; each bucket keeps its extremes and when they happened, so a
// spike never disappears in the downsampling.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gmt::analyzer {

// At most `max_buckets` buckets of equal width from the first time seen. The width is a
// power of two, doubled (neighbouring buckets merged) when a time falls past the last
// bucket. Bucket keeps its own contents; merge(into, from) folds one into another.
template <typename Bucket> class BucketedSeries {
  public:
    explicit BucketedSeries(size_t max_buckets) : max_(max_buckets ? max_buckets : 1) {}

    // The bucket time_ns falls in, after any merging it needs.
    template <typename Merge> Bucket& at(uint64_t time_ns, Merge&& merge) {
        if (!started_) {
            started_ = true;
            origin_ = time_ns;
        }
        // Threads stamp their own calls, so a slightly older time can follow a newer one.
        const uint64_t offset = time_ns > origin_ ? time_ns - origin_ : 0;
        uint64_t slot = offset >> shift_;
        while (slot >= max_ && shift_ < 63) {
            std::vector<Bucket> merged((buckets_.size() + 1) / 2);
            for (size_t i = 0; i < buckets_.size(); ++i) {
                merge(merged[i / 2], buckets_[i]);
            }
            buckets_ = std::move(merged);
            ++shift_;
            slot = offset >> shift_;
        }
        const size_t index = static_cast<size_t>(slot < max_ ? slot : max_ - 1);
        if (index >= buckets_.size()) {
            buckets_.resize(index + 1);
        }
        return buckets_[index];
    }

    const std::vector<Bucket>& buckets() const { return buckets_; }

  private:
    size_t max_;
    bool started_ = false;
    uint64_t origin_ = 0;
    unsigned shift_ = 0; // log2 of the bucket width in ns
    std::vector<Bucket> buckets_;
};

class Timeline {
  public:
    explicit Timeline(size_t max_points = 2000);

    void record(uint64_t time_ns, uint64_t bytes);

    // At most max_points (time_ns, bytes) pairs in time order: each bucket's maximum.
    std::vector<std::pair<uint64_t, uint64_t>> points() const;

  private:
    struct Bucket {
        uint64_t time_ns = 0;
        uint64_t bytes = 0;
        bool used = false;
    };
    BucketedSeries<Bucket> series_;
};

inline constexpr size_t kKindCount = 7; // indexed by format::Kind
using KindLevels = std::array<uint64_t, kKindCount>;

// One device's live bytes by kind over time: each bucket keeps the levels of every kind at
// the moment of its lowest and at the moment of its highest total, so that stacking the
// kinds gives exactly the total at those moments, and neither a spike nor a dip is lost.
class KindTimeline {
  public:
    struct Sample {
        uint64_t time_ns = 0;
        uint64_t total = 0;
        KindLevels levels{};
    };

    explicit KindTimeline(size_t max_buckets = 2000);

    void record(uint64_t time_ns, const KindLevels& levels);

    // In time order, at most two per bucket (one when its extremes are the same moment).
    std::vector<Sample> samples() const;

  private:
    struct Bucket {
        bool used = false;
        Sample low, high;
    };
    BucketedSeries<Bucket> series_;
};

} // namespace gmt::analyzer
