#include "analysis/growth_analysis.h"

#include "analysis/analysis.h"
#include "read/trace_reader.h"

#include <algorithm>
#include <memory>

namespace gmt::analyzer {

namespace {

// Feeds the second reading's live-byte changes to the tracker, each with the phase that
// was current then.
class GrowthFeed : public SiteObserver {
  public:
    GrowthFeed(GrowthTracker& tracker, const PhaseTracker& phases)
        : tracker_(tracker), phases_(phases) {}
    void onCharge(const Charge& c, bool added, uint64_t) override {
        tracker_.change(c.stack, c.bytes, added, phases_.current());
    }

  private:
    GrowthTracker& tracker_;
    const PhaseTracker& phases_;
};

// The process's sites at both levels: its allocations, and the blocks a caching allocator
// handed out inside them (block_tracker.h). A framework's segments are cached, so only its
// blocks show the program's growth and its steps' allocation pattern. A block's stack is
// taken in the allocator's callback and a segment's in the CUDA call under it, so no stack
// is a site of both levels.
std::vector<std::pair<uint32_t, SiteHistory>> sitesOf(const Analysis& analysis, uint32_t process) {
    std::vector<std::pair<uint32_t, SiteHistory>> sites;
    const auto add = [&](uint64_t key, const SiteHistory& h) {
        if (key >> 32 == process) {
            sites.emplace_back(static_cast<uint32_t>(key), h);
        }
    };
    analysis.accounting().forEachSiteHistory(add);
    analysis.blockAccounting().forEachSiteHistory(add);
    return sites;
}

// The sites that may grow (see growth_analysis.h); in an aggregated trace also those whose
// folded allocations' live bytes at the Phase records rose so (folded_levels.h): their
// allocations may all be folded, so the kept events alone show no growth.
std::vector<uint32_t> candidates(const std::vector<std::pair<uint32_t, SiteHistory>>& sites,
                                 const IterationClock& clock, const FoldedLevels& folded) {
    const uint64_t middle =
        clock.first_ns + (std::max(clock.last_ns, clock.first_ns) - clock.first_ns) / 2;
    std::vector<uint32_t> out = folded.rising(kMinGrowingIterations, middle);
    for (const auto& [stack, h] : sites) {
        if (h.new_maxima >= kMinGrowingIterations && h.last_max_ns >= middle) {
            out.push_back(stack);
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// The second reading of one process's trace, with the growth tracker attached.
void follow(const ProcessData& p, const AnalysisOptions& options, GrowthResult& result,
            const std::vector<uint32_t>& sites) {
    const IterationClock& clock = result.clock;
    GrowthTracker tracker(clock.source == IterationClock::Source::Pattern
                              ? std::optional<uint32_t>(clock.stack)
                              : std::nullopt);
    tracker.follow(sites);
    AnalysisOptions lean = options;
    lean.timeline_points = 2; // nothing of this reading is shown but the growth
    Analysis again(lean);
    TraceReader reader(p.trace_file);
    const uint32_t process = again.addProcess(p.trace_file, reader.prologue());
    GrowthFeed feed(tracker, *again.processes()[process]->phase_tracker);
    again.observeSites(&feed);
    auto record = std::make_unique<Record>();
    while (reader.next(*record)) {
        const bool marks = record->tag == format::RecordTag::Phase &&
                           clock.source == IterationClock::Source::Phase &&
                           record->phase.kind != format::PhaseKind::Pop &&
                           record->phase.name == clock.phase;
        if (record->tag == format::RecordTag::FoldedMark) {
            // What the trace folded held at the Phase record after it, as changes.
            for (const format::FoldedSiteChange& c : record->folded_mark.sites) {
                tracker.change(c.stack, static_cast<uint64_t>(c.bytes < 0 ? -c.bytes : c.bytes),
                               c.bytes > 0, again.processes()[process]->phase_tracker->current());
            }
        }
        if (marks) {
            tracker.boundary();
        }
        again.onRecord(process, *record);
    }
    // What the process's end releases is no iteration's doing: the feed stops here.
    again.observeSites(nullptr);
    result.boundaries = tracker.boundaries();
    result.followed_sites = sites.size();
    result.sites = tracker.finish();
}

} // namespace

void analyzeGrowth(Analysis& analysis, const GrowthOptions& options) {
    for (uint32_t i = 0; i < analysis.processes().size(); ++i) {
        ProcessData& p = *analysis.processes()[i];
        GrowthResult result;
        const auto sites = sitesOf(analysis, i);
        result.clock = chooseIterationClock(p.phase_tracker->phases(), sites, options.iteration);
        result.boundaries = result.clock.occurrences;
        const auto followed = candidates(sites, result.clock, p.folded);
        if (result.clock.source != IterationClock::Source::None &&
            result.clock.occurrences >= kMinIterationBoundaries && !followed.empty()) {
            follow(p, analysis.options(), result, followed);
        }
        p.growth = std::move(result);
    }
}

} // namespace gmt::analyzer
