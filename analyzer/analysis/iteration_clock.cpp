#include "analysis/iteration_clock.h"

#include "analysis/growth_tracker.h"

#include <map>
#include <tuple>

namespace gmt::analyzer {

std::string_view sourceName(IterationClock::Source source) {
    switch (source) {
    case IterationClock::Source::Phase:
        return "phase";
    case IterationClock::Source::Pattern:
        return "pattern";
    case IterationClock::Source::None:
        break;
    }
    return "none";
}

namespace {

// A phase name over all its places in the tree.
struct NameFacts {
    uint64_t occurrences = 0;
    uint32_t depth = UINT32_MAX;
    uint64_t first_ns = UINT64_MAX;
    uint64_t last_ns = 0;
};

std::map<std::string, NameFacts> namesOf(const std::vector<PhaseStats>& phases) {
    std::map<std::string, NameFacts> names;
    for (const PhaseStats& p : phases) {
        if (p.name == kOtherPhases) {
            continue; // many names, not one loop
        }
        NameFacts& n = names[p.name];
        n.occurrences += p.occurrences;
        n.depth = std::min(n.depth, p.depth);
        n.first_ns = std::min(n.first_ns, p.first_time_ns);
        n.last_ns = std::max(n.last_ns, p.last_time_ns);
    }
    return names;
}

// A stack that can mark iterations: allocated often enough, and what it allocates is
// mostly freed again before its next allocation (its live bytes rose above every earlier
// level in at most half of its allocations). A stack whose every allocation is kept (a
// list filled in a loop) is no clock: timed by itself, it would always grow.
bool repeats(const SiteHistory& h) {
    return h.allocations >= kMinIterationBoundaries && h.new_maxima * 2 <= h.allocations;
}

IterationClock byPattern(const std::vector<std::pair<uint32_t, SiteHistory>>& sites) {
    IterationClock clock;
    std::map<uint64_t, uint64_t> stacks_by_count;
    for (const auto& [stack, h] : sites) {
        if (repeats(h)) {
            ++stacks_by_count[h.allocations];
        }
    }
    uint64_t count = 0, most = 0;
    for (const auto& [c, n] : stacks_by_count) { // ascending: ties keep the smaller count
        if (n > most) {
            most = n;
            count = c;
        }
    }
    if (most == 0) {
        clock.why_none = "no phase marked and no allocation stack repeated " +
                         std::to_string(kMinIterationBoundaries) +
                         " times with its memory freed in between";
        return clock;
    }
    uint64_t first = UINT64_MAX;
    for (const auto& [stack, h] : sites) {
        if (repeats(h) && h.allocations == count &&
            std::tie(h.first_ns, stack) < std::tie(first, clock.stack)) {
            first = h.first_ns;
            clock.stack = stack;
        }
    }
    clock.source = IterationClock::Source::Pattern;
    clock.occurrences = count;
    for (const auto& [stack, h] : sites) {
        if (stack == clock.stack) {
            clock.first_ns = h.first_ns;
            clock.last_ns = h.last_ns;
        }
    }
    return clock;
}

} // namespace

IterationClock chooseIterationClock(const std::vector<PhaseStats>& phases,
                                    const std::vector<std::pair<uint32_t, SiteHistory>>& sites,
                                    const std::optional<std::string>& wanted) {
    const auto names = namesOf(phases);
    IterationClock clock;
    if (wanted) {
        auto it = names.find(*wanted);
        if (it == names.end()) {
            clock.why_none = "phase " + *wanted + " was never marked";
            return clock;
        }
        clock.source = IterationClock::Source::Phase;
        clock.phase = *wanted;
        clock.occurrences = it->second.occurrences;
        clock.first_ns = it->second.first_ns;
        clock.last_ns = it->second.last_ns;
        return clock;
    }
    const NameFacts* best = nullptr;
    for (const auto& [name, n] : names) {
        if (n.occurrences < kMinIterationBoundaries) {
            continue;
        }
        if (!best ||
            std::tuple(n.depth, -static_cast<int64_t>(n.occurrences), n.first_ns) <
                std::tuple(best->depth, -static_cast<int64_t>(best->occurrences), best->first_ns)) {
            best = &n;
            clock.phase = name;
        }
    }
    if (best) {
        clock.source = IterationClock::Source::Phase;
        clock.occurrences = best->occurrences;
        clock.first_ns = best->first_ns;
        clock.last_ns = best->last_ns;
        return clock;
    }
    return byPattern(sites);
}

} // namespace gmt::analyzer
