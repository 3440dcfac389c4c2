#include "report/trace_report.h"

#include "analysis/trace_analysis.h"
#include "analysis/whatif/trace_whatif.h"

namespace gmt::analyzer {

Report reportOfTraces(const std::vector<std::string>& traces, const ReportOptions& options) {
    AnalysisOptions ao;
    ao.timeline_points = options.timeline_points;
    ao.top = options.top; // holes and pins kept per fragmentation row: as many as listed
    ao.detail.kind_timeline_points = options.detail.kind_timeline_points;
    ao.detail.moments = options.detail.moments;
    ao.detail.moment_sites = options.detail.moment_sites;
    ao.detail.site_timeline_points = options.detail.site_timeline_points;
    // Which sites are drawn is chosen at the end, from the largest ones kept at each
    // moment: keeping twice as many keeps a drawn site's level at moments where a few
    // others were larger.
    ao.detail.site_timeline_sites = 2 * options.detail.site_timeline_sites;
    ao.layout_entries = options.detail.layout_entries;
    ao.layout_failures = options.detail.layout_failures;
    ao.phase = options.phase;
    ao.until_ns = options.until_ns;
    Analysis analysis(ao);
    analyzeTraces(traces, analysis);
    GrowthOptions growth;
    growth.iteration = options.iteration;
    analyzeGrowth(analysis, growth);
    Report report = makeReport(analysis, options);
    if (options.what_if && options.until_ns == UINT64_MAX) {
        WhatIfOptions what_if;
        what_if.max_requests = kReportMaxRequests;
        what_if.min_capacity_requests = kReportMinCapacityRequests;
        for (const auto& process : analysis.processes()) {
            for (WhatIfRun& run : whatIfOfAnalyzedTrace(*process, what_if)) {
                report.what_if.push_back(std::move(run));
            }
        }
    }
    return report;
}

} // namespace gmt::analyzer
