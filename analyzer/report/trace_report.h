// Traces in, their report out: the reading pass (trace_analysis.h) into an Analysis
// sized by the report's options, then makeReport (report.h). What `report`, `check`,
// `diff` and `record`'s summary do with traces.
#pragma once

#include "model/report.h"
#include "report/report_builder.h"

#include <string>
#include <vector>

namespace gmt::analyzer {

// Throws TraceError for a trace that cannot be read at all.
Report reportOfTraces(const std::vector<std::string>& traces, const ReportOptions& options);

} // namespace gmt::analyzer
