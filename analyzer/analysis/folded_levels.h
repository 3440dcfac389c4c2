// What an aggregated trace's folded allocations held at the moments the analysis describes
// but the kept events do not replay (format/aggregate.h, FoldedMark and FoldedPeak;
// preload/aggregator.h says why they are written instead of the allocations): at every
// Phase record, their live bytes (added to the phase tracker's level there) and each
// stack's (added to growth's per-site live bytes at iteration boundaries,
// growth_analysis.cpp).
//
// A FoldedMark gives changes since the Phase record before; they apply at the Phase record
// that follows it. The running sums per stack are kept with how often they rose above every
// earlier sum at a mark, so that growth can follow a site whose growth the kept events
// alone do not show (its allocations all folded).
#pragma once

#include <gpumemtrace/format/aggregate.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace gmt::analyzer {

class FoldedLevels {
  public:
    // A FoldedMark record: for the Phase record after it.
    void onMark(const format::FoldedMark& mark);
    // The Phase record at `time_ns`: returns the folded allocations' live bytes there.
    uint64_t atPhase(uint64_t time_ns);
    // A FoldedPeak's time: `after_ns` after the last Phase record.
    uint64_t peakTime(uint64_t after_ns) const { return phase_ns_ + after_ns; }

    // The stacks whose folded live bytes at the marks rose above every earlier level at
    // least `times` times, the last of them at or after `since_ns`.
    std::vector<uint32_t> rising(uint64_t times, uint64_t since_ns) const;

  private:
    struct Site {
        int64_t bytes = 0;
        int64_t max_bytes = 0;
        uint64_t new_maxima = 0;
        uint64_t last_max_ns = 0;
    };
    int64_t live_ = 0;
    uint64_t phase_ns_ = 0;
    std::vector<format::FoldedSiteChange> pending_;
    std::unordered_map<uint32_t, Site> sites_;
};

} // namespace gmt::analyzer
