// Memory that grows iteration after iteration, per allocation site of one process.
//
// The tracker is told of live bytes appearing and going at a site (a stack id) and of
// iteration boundaries; it knows nothing of what the allocations are, so segments
// (cudaMalloc, VMM handles) and sub-allocations inside them (a framework's tensors) feed
// it alike. At every boundary it compares each site's live bytes with the previous
// boundary's: the site grew in that iteration, shrank, or stayed. Growth is measured over
// the site's current run without shrinking (a boundary where it shrank starts the run
// anew), from the first iteration in that run in which it grew:
//
//   bytes per iteration = (live bytes at the last boundary - at the boundary before the
//                          first growth) / iterations since the first growth
//   confidence          = (iterations that grew + 1) / (iterations since the first growth + 2)
//
// The confidence is Laplace's rule of succession: the chance that the next iteration grows
// too, judged by how many did. A site is growing when it grew in at least
// kMinGrowingIterations iterations, with a confidence of at least kMinGrowthConfidence.
// docs/analysis.md states the same rules.
//
// Cost: O(1) per change and per boundary (a site catches up with the boundaries it
// missed only when it changes, or at the end); memory per followed site.
#pragma once

#include "analysis/phase_tracker.h"
#include "base/flat_map.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace gmt::analyzer {

inline constexpr uint64_t kMinGrowingIterations = 3;
inline constexpr double kMinGrowthConfidence = 0.5;
// Boundaries needed to judge growth at all: kMinGrowingIterations comparisons.
inline constexpr uint64_t kMinIterationBoundaries = kMinGrowingIterations + 1;

struct GrowthSiteResult {
    uint32_t stack = 0;
    uint64_t bytes_per_iteration = 0;
    uint64_t first_iteration = 0;    // 1-based: iteration k ends at boundary k (0 is the first)
    uint64_t iterations = 0;         // from the first growth through the last boundary
    uint64_t growing_iterations = 0; // of those, the ones that grew
    double confidence = 0;
    uint64_t live_bytes = 0;   // at the last boundary
    uint32_t phase = kNoPhase; // current when the first growing allocation was made
};

class GrowthTracker {
  public:
    // With `clock_stack`, each allocation at that stack is a boundary (taken before it);
    // otherwise the caller calls boundary().
    explicit GrowthTracker(std::optional<uint32_t> clock_stack = std::nullopt)
        : clock_stack_(clock_stack) {}

    // Only these stacks are followed (by default every one).
    void follow(const std::vector<uint32_t>& stacks);
    // `bytes` became live (added) or stopped being live at `stack`; `phase` is current.
    void change(uint32_t stack, uint64_t bytes, bool added, uint32_t phase);
    void boundary() { ++boundaries_; }
    uint64_t boundaries() const { return boundaries_; }

    // The growing sites, most bytes per iteration first.
    std::vector<GrowthSiteResult> finish();

  private:
    struct Site {
        uint32_t stack = 0;
        uint64_t value = 0;        // live bytes now
        uint64_t seen = 0;         // boundaries accounted for
        uint64_t at_boundary = 0;  // live bytes at the last accounted boundary
        uint64_t first_growth = 0; // 0: no growth in the current run
        uint64_t base = 0;         // live bytes at the boundary before first_growth
        uint64_t growths = 0;
        uint32_t last_phase = kNoPhase; // of the last allocation that added bytes
        uint32_t growth_phase = kNoPhase;
    };
    void catchUp(Site& s) const;

    std::optional<uint32_t> clock_stack_;
    bool filtered_ = false;
    FlatMap<bool> followed_;
    FlatMap<uint32_t> index_; // stack -> sites_
    std::vector<Site> sites_;
    uint64_t boundaries_ = 0;
};

} // namespace gmt::analyzer
