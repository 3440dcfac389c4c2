// The HTML view of the report: one self-contained page (docs/html-report.md). Its scripts
// and styles (analyzer/views/html/, plus uPlot from npm) are compiled into the program, its
// data is the JSON view of the Report (report_json.h) with every frame written once.
#pragma once

#include "model/report.h"
#include "report/report_builder.h"

#include <functional>
#include <string>
#include <string_view>

namespace gmt::analyzer {

// False when this build was made without the npm packages the page needs (uPlot):
// renderHtml() must not be called then.
bool htmlReportAvailable();

// What to tell a user of such a build.
std::string htmlReportUnavailableReason();

// The page: no external resource, nothing fetched when it is opened.
std::string renderHtml(const Report& report);
// The same page handed to `write` piece by piece as it is made, never whole in memory.
void writeHtml(const Report& report, const std::function<void(std::string_view)>& write);

// What an HTML report computes: more listed sites than a text report (its flame graphs
// draw them) and the detail only it shows (ReportDetail::forHtml()).
ReportOptions htmlReportOptions();

} // namespace gmt::analyzer
