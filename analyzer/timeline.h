// Live bytes over time in bounded memory. The trace length is unknown while streaming,
// so buckets start narrow and double in width (merging neighbours) whenever they would
// exceed the point budget; each bucket keeps its maximum and when it happened, so a
// spike never disappears in the downsampling.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gmt::analyzer {

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
    void halve();

    size_t max_points_;
    bool started_ = false;
    uint64_t origin_ = 0;
    uint64_t width_ = 1;       // ns per bucket: always a power of two
    unsigned width_shift_ = 0; // log2(width_)
    std::vector<Bucket> buckets_;
};

} // namespace gmt::analyzer
