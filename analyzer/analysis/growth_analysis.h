// The growth analysis of a finished Analysis: for each process, where its iterations
// begin (iteration_clock.h) and which allocation sites grow across them
// (growth_tracker.h).
//
// It needs a second reading of the process's trace, because the iteration boundaries are
// known only once the whole trace was seen (which phase repeats most, which allocation
// count the stacks share). That reading is skipped where nothing can grow: a site is
// followed only if its live bytes rose above every earlier level at least
// kMinGrowingIterations times, the last of them in the second half of the time from the
// first iteration boundary to the last (live_accounting.h's SiteHistory, kept by the first
// reading). A site that stopped rising halfway through the iterations is not growing at
// their end; only for a site that stopped within a few iterations of the middle, with
// iterations of uneven length, can this rule rather than the confidence decide.
#pragma once

#include "analysis/growth_tracker.h"
#include "analysis/iteration_clock.h"

#include <optional>
#include <string>
#include <vector>

namespace gmt::analyzer {

class Analysis;

struct GrowthOptions {
    std::optional<std::string> iteration; // the phase name that begins iterations
};

struct GrowthResult {
    IterationClock clock;
    uint64_t boundaries = 0;             // iteration boundaries (the clock's occurrences)
    uint64_t followed_sites = 0;         // sites the second reading followed (0: it was not needed)
    std::vector<GrowthSiteResult> sites; // growing sites, most bytes per iteration first
};

// Fills every process's ProcessData::growth. Throws TraceError when a trace can no longer
// be read (it changed since the first reading).
void analyzeGrowth(Analysis& analysis, const GrowthOptions& options);

} // namespace gmt::analyzer
