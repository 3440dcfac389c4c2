#include "trace_report.h"

#include "trace_analysis.h"

namespace gmt::analyzer {

Report reportOfTraces(const std::vector<std::string>& traces, const ReportOptions& options) {
    AnalysisOptions ao;
    ao.timeline_points = options.timeline_points;
    ao.top = options.top; // holes and pins kept per fragmentation row: as many as listed
    Analysis analysis(ao);
    analyzeTraces(traces, analysis);
    return makeReport(analysis, options);
}

} // namespace gmt::analyzer
