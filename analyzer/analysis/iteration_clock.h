// Where the iterations of a process begin, for the growth analysis (growth_analysis.h):
//
//   1. a phase name given by the user (`--iteration NAME`): each time it is marked or
//      pushed (an NVTX range push is a push);
//   2. otherwise the phase name marked or pushed at least kMinIterationBoundaries times
//      that is least deeply nested (the outer loop, not its forward/backward parts), then
//      the most often marked, then the earliest;
//   3. otherwise, when no phase name repeats that often, the periodic allocation pattern:
//      programs repeat the same allocations in every iteration, so the allocation counts
//      of the stacks that repeat cluster on the number of iterations. The count shared by
//      the most stacks (allocated at least kMinIterationBoundaries times, and whose
//      memory is mostly freed before their next allocation; ties: the smaller count) is
//      taken as the number of iterations, and each allocation at the stack of that count
//      allocated first is a boundary.
#pragma once

#include "analysis/live_accounting.h"
#include "analysis/phase_tracker.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gmt::analyzer {

struct IterationClock {
    enum class Source { None, Phase, Pattern };
    Source source = Source::None;
    std::string phase;        // Phase: the name
    uint32_t stack = 0;       // Pattern: the stack whose allocations begin iterations
    uint64_t occurrences = 0; // boundaries the first pass saw
    uint64_t first_ns = 0;    // when the first and the last of them were
    uint64_t last_ns = 0;
    std::string why_none; // None: why there are no iterations
};

std::string_view sourceName(IterationClock::Source source);

// `sites`: (stack, history) of one process's allocation sites.
IterationClock chooseIterationClock(const std::vector<PhaseStats>& phases,
                                    const std::vector<std::pair<uint32_t, SiteHistory>>& sites,
                                    const std::optional<std::string>& wanted);

} // namespace gmt::analyzer
