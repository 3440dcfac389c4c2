// Building a Report (model/report.h) from a finished Analysis: which sites are listed,
// which leaks are held by a caching allocator, what detail the HTML view gets, and the
// symbolization of only the stacks the report lists.
#pragma once

#include "analysis/analysis.h"
#include "analysis/caching/caching_allocators.h"
#include "base/version.h"
#include "model/report.h"
#include "report/leak_policy.h"
#include "report/own_code.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace gmt::analyzer {

// How much detail to compute and embed for the HTML view; 0 leaves a part out (the
// default: text and JSON reports do not pay for what they do not show).
struct ReportDetail {
    size_t kind_timeline_points = 0; // downsampling buckets per device
    size_t moments = 0;              // moments sampled over the run
    size_t moment_sites = 0;         // stacks listed per moment
    size_t layout_entries = 0;       // spans, blocks and holes per layout (peak, failures)
    size_t layout_failures = 0;      // failures with a layout: the first ones
    size_t allocated_sites = 0;      // stacks listed by bytes allocated in total
    size_t stacks = 0;               // distinct stacks embedded for all of the above
    size_t site_timeline_points = 0; // downsampling buckets per device, by site
    size_t site_timeline_sites = 0;  // sites drawn as series of their own, the rest as one

    // What `report --format html` uses.
    static ReportDetail forHtml() {
        return {.kind_timeline_points = 2000,
                .moments = 256,
                .moment_sites = 20,
                .layout_entries = 2000,
                .layout_failures = 10,
                .allocated_sites = 500,
                .stacks = 1000,
                .site_timeline_points = 2000,
                .site_timeline_sites = 8};
    }
};

struct ReportOptions {
    size_t top = 10;               // leaks, top sites, holes and pins listed
    size_t timeline_points = 2000; // per device (an analysis option: must match it)
    bool symbols = true;           // false: module + offset frames only
    UserCodeOptions user_code;     // which frames are the user's own (report/own_code.h)
    // Leaks and growth: only those of this phase and the phases nested in it
    // (LeakScope::phase, GrowthScope::phase).
    std::optional<std::string> phase;
    // The phase name whose marks or pushes begin iterations (default: chosen,
    // analyzer/analysis/iteration_clock.h). Used where the report is made from traces.
    std::optional<std::string> iteration;
    // The leak policy's rules (leak_policy.h, LeakPolicy): called for every leak site in
    // scope, largest first, with its stack; true removes it from the list into LeakScope's
    // suppressed figures. Without a filter only the listed sites are symbolized.
    LeakFilter leak_filter;
    // Allocations still live at the end whose stack one of these allocators' patterns
    // matches are held by it, not leaked (Report::held_at_exit). Null: they are leaks
    // (`check --count-cached`).
    std::shared_ptr<const CachingAllocatorTable> caching_allocators =
        CachingAllocatorTable::builtin();
    ReportDetail detail;
    // Read each trace only to this time (AnalysisOptions::until_ns): the report of what was
    // live then. Used where the report is made from traces.
    uint64_t until_ns = UINT64_MAX;
    // Replay each trace's allocation requests under other allocator settings, as
    // `gpumemtrace whatif` does with its default settings (Report::what_if). Used where the
    // report is made from whole traces (not with until_ns).
    bool what_if = false;
};

// The leak policy these options describe.
LeakPolicy leakPolicy(const ReportOptions& options);

// The report of a finished analysis. Memory: the listed items only; sites beyond `top`
// are counted, never symbolized unless a leak filter must see them.
Report makeReport(const Analysis& analysis, const ReportOptions& options);

} // namespace gmt::analyzer
