// Live bytes over time in bounded memory. The trace length is unknown while streaming,
// so buckets start narrow and double in width (merging neighbours) whenever they would
// exceed the point budget; each bucket keeps its maximum and when it happened, so a
// spike never disappears in the downsampling. Only buckets that saw a value are stored:
// a device with two events costs two buckets, whatever the budget (a trace may name
// thousands of devices).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gmt::analyzer {

// The most points a timeline may be asked for (the CLI's --timeline-points bound).
inline constexpr size_t kMaxTimelinePoints = 1'000'000;

class Timeline {
  public:
    // `max_points` is clamped to 1 ... kMaxTimelinePoints.
    explicit Timeline(size_t max_points = 2000);

    void record(uint64_t time_ns, uint64_t bytes);

    // At most max_points (time_ns, bytes) pairs in time order: each bucket's maximum.
    std::vector<std::pair<uint64_t, uint64_t>> points() const;

  private:
    struct Bucket {
        uint64_t index = 0; // offset from the origin / width
        uint64_t time_ns = 0;
        uint64_t bytes = 0;
    };
    void halve();
    // Sorts the buckets by index and merges those with the same index (each keeps the
    // largest value, the first one recorded on a tie).
    void compact();

    size_t max_points_;
    bool started_ = false;
    uint64_t origin_ = 0;
    unsigned width_shift_ = 0; // log2 of the ns per bucket
    // Sorted by index with distinct indexes up to sorted_; a time older than the last one
    // (threads stamp their own calls) appends out of order until the next compact().
    std::vector<Bucket> buckets_;
    size_t sorted_ = 0;
};

} // namespace gmt::analyzer
