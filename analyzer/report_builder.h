// Traces in, the DESIGN §4 report out. The library entry point shared by the `report`,
// `check` and `diff` commands.
#pragma once

#include "analysis.h"
#include "json.h"
#include "trace_analysis.h"

#include <string>
#include <vector>

namespace gmt::analyzer {

inline constexpr int kReportSchemaVersion = 1;

struct ReportOptions {
    size_t top = 10;               // leaks, top sites, holes and pins listed
    size_t timeline_points = 2000; // per device
    bool symbols = true;           // false: module + offset frames only
};

// The report of a finished analysis.
Json reportJson(const Analysis& analysis, const ReportOptions& options);

// Both of the above. Throws TraceError for unusable input.
Json buildReport(const std::vector<std::string>& traces, const ReportOptions& options);

} // namespace gmt::analyzer
