// Live bytes over time in bounded memory. The trace length is unknown while streaming,
// so buckets start narrow and double in width (merging neighbours) whenever they would
// exceed the point budget; each bucket keeps its extremes and when they happened, so a
// spike never disappears in the downsampling. Only buckets that saw a value are stored:
// a device with two events costs two buckets, whatever the budget (a trace may name
// thousands of devices).
#pragma once

#include <gpumemtrace/format/event.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gmt::analyzer {

// The most points a timeline may be asked for (the CLI's --timeline-points bound).
inline constexpr size_t kMaxTimelinePoints = 1'000'000;

// At most `max_buckets` buckets (clamped to 1 ... kMaxTimelinePoints) of equal width from
// the first time seen. The width is a power of two, doubled (neighbouring buckets merged)
// when a time falls past the last bucket. Bucket::fold(into, from) folds a bucket recorded
// later into one recorded earlier.
template <typename Bucket> class BucketedSeries {
  public:
    explicit BucketedSeries(size_t max_buckets)
        : max_(std::clamp<size_t>(max_buckets, 1, kMaxTimelinePoints)) {}

    // Folds `value` into the bucket time_ns falls in. A time older than the last one costs
    // O(log buckets) spread over later calls.
    void add(uint64_t time_ns, const Bucket& value) {
        // Most times fall in the last bucket, as the one before did: no index to compute.
        if (time_ns - last_begin_ < last_width_) [[likely]] {
            Bucket::fold(entries_.back().bucket, value);
            return;
        }
        addToNewBucket(time_ns, value);
    }

    // The bucket time_ns falls in, default-constructed when new, valid until the next call
    // (for a caller that decides what to keep after looking at it). A time older than the
    // last one costs O(buckets).
    Bucket& at(uint64_t time_ns) {
        last_width_ = 0; // the entries move
        const uint64_t index = indexOf(time_ns);
        if (!entries_.empty() && entries_.back().index == index) {
            return entries_.back().bucket;
        }
        if (sorted_ == entries_.size() && (entries_.empty() || entries_.back().index < index)) {
            entries_.push_back(Entry{index, Bucket{}}); // in time order: the common case
            sorted_ = entries_.size();
            return entries_.back().bucket;
        }
        compact();
        auto it = std::lower_bound(entries_.begin(), entries_.end(), index,
                                   [](const Entry& e, uint64_t i) { return e.index < i; });
        if (it == entries_.end() || it->index != index) {
            it = entries_.insert(it, Entry{index, Bucket{}});
        }
        sorted_ = entries_.size();
        return it->bucket;
    }

    // The buckets stored, in time order.
    std::vector<Bucket> buckets() const {
        BucketedSeries copy = *this;
        copy.compact();
        std::vector<Bucket> out;
        out.reserve(copy.entries_.size());
        for (const Entry& e : copy.entries_) {
            out.push_back(e.bucket);
        }
        return out;
    }

  private:
    struct Entry {
        uint64_t index = 0; // offset from the origin / width
        Bucket bucket;
    };

    // add() for a time outside the last bucket: out of line, so that add() inlines.
    [[gnu::noinline]] void addToNewBucket(uint64_t time_ns, const Bucket& value) {
        const uint64_t index = indexOf(time_ns);
        if (!entries_.empty() && entries_.back().index == index) {
            Bucket::fold(entries_.back().bucket, value);
        } else {
            const bool in_order =
                sorted_ == entries_.size() && (entries_.empty() || entries_.back().index < index);
            entries_.push_back(Entry{index, value});
            if (in_order) {
                sorted_ = entries_.size();
            } else if (entries_.size() >= 2 * max_ + 16) {
                compact(); // at most max_ remain: out-of-order times cost O(log) each
            }
        }
        // The times whose bucket is the last one, as indexOf would find it.
        last_width_ = 0;
        const uint64_t width = uint64_t{1} << std::min(shift_, 62u);
        if (!entries_.empty() && entries_.back().index == index && shift_ < 62 &&
            index < (uint64_t{1} << (62 - shift_)) &&
            !__builtin_add_overflow(origin_, index << shift_, &last_begin_) &&
            last_begin_ + width > last_begin_) {
            last_width_ = width;
        }
    }

    // The index of time_ns's bucket, after any widening it needs.
    uint64_t indexOf(uint64_t time_ns) {
        if (!started_) {
            started_ = true;
            origin_ = time_ns;
        }
        // Threads stamp their own calls, so a slightly older time can follow a newer one.
        const uint64_t offset = time_ns > origin_ ? time_ns - origin_ : 0;
        uint64_t slot = offset >> shift_;
        while (slot >= max_ && shift_ < 63) {
            halve();
            slot = offset >> shift_;
        }
        return std::min<uint64_t>(slot, max_ - 1);
    }

    // Folds runs of equal index in an index-sorted vector, in the order they were recorded.
    void mergeEqual() {
        size_t out = 0;
        for (size_t i = 0; i < entries_.size(); ++i) {
            if (out > 0 && entries_[out - 1].index == entries_[i].index) {
                Bucket::fold(entries_[out - 1].bucket, entries_[i].bucket);
            } else {
                entries_[out++] = entries_[i];
            }
        }
        entries_.resize(out);
        sorted_ = out;
    }
    void compact() {
        if (sorted_ == entries_.size()) {
            return;
        }
        std::stable_sort(entries_.begin(), entries_.end(),
                         [](const Entry& a, const Entry& b) { return a.index < b.index; });
        mergeEqual();
    }
    void halve() {
        compact();
        for (Entry& e : entries_) {
            e.index /= 2;
        }
        mergeEqual();
        ++shift_;
    }

    size_t max_;
    bool started_ = false;
    uint64_t origin_ = 0;
    unsigned shift_ = 0; // log2 of the bucket width in ns
    // Sorted by index with distinct indexes up to sorted_; a time older than the last one
    // appends out of order until the next compact().
    std::vector<Entry> entries_;
    size_t sorted_ = 0;
    // The last bucket's times are [last_begin_, last_begin_ + last_width_) (width 0: not
    // known), while it stays the last.
    uint64_t last_begin_ = 0;
    uint64_t last_width_ = 0;
};

// A bucket's lowest and highest moments appended in time order, once when they are the
// same moment (the by-kind and by-site timelines keep both).
template <typename Sample>
void appendLowAndHigh(const Sample& low, const Sample& high, std::vector<Sample>& out) {
    const bool same = low.time_ns == high.time_ns && low.total == high.total;
    const Sample& first = low.time_ns <= high.time_ns ? low : high;
    const Sample& second = &first == &low ? high : low;
    out.push_back(first);
    if (!same) {
        out.push_back(second);
    }
}

class Timeline {
  public:
    // `max_points` is clamped to 1 ... kMaxTimelinePoints.
    explicit Timeline(size_t max_points = 2000);

    void record(uint64_t time_ns, uint64_t bytes) { series_.add(time_ns, Bucket{time_ns, bytes}); }

    // At most max_points (time_ns, bytes) pairs in time order: each bucket's maximum.
    std::vector<std::pair<uint64_t, uint64_t>> points() const;

  private:
    struct Bucket {
        uint64_t time_ns = 0;
        uint64_t bytes = 0;
        // The larger value stays, the first one on a tie.
        static void fold(Bucket& into, const Bucket& from) {
            if (from.bytes > into.bytes) {
                into = from;
            }
        }
    };
    BucketedSeries<Bucket> series_;
};

inline constexpr size_t kKindCount = 7; // indexed by format::Kind
// A kind's slot in per-kind figures: a value the format does not define (a crafted trace;
// blocks are never counted by kind) goes to None's. A comparison, not a remainder: every
// allocation and free computes it.
constexpr size_t kindIndex(format::Kind k) {
    const auto i = static_cast<size_t>(k);
    return i < kKindCount ? i : 0;
}
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
        Sample low, high;
        static void fold(Bucket& into, const Bucket& from) {
            if (from.high.total > into.high.total) {
                into.high = from.high;
            }
            if (from.low.total < into.low.total) {
                into.low = from.low;
            }
        }
    };
    BucketedSeries<Bucket> series_;
};

} // namespace gmt::analyzer
