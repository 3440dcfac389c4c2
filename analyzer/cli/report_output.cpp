#include "cli/report_output.h"

#include "report/report_json.h"
#include "views/html_report.h"
#include "views/text_report.h"

namespace gmt::cli {

std::string reportFormat(const std::string& format, const std::string& output) {
    if (!format.empty()) {
        return format;
    }
    return output.ends_with(".json") ? "json" : output.ends_with(".html") ? "html" : "text";
}

analyzer::ReportOptions reportOptionsFor(const std::string& format, size_t top) {
    analyzer::ReportOptions options =
        format == "html" ? analyzer::htmlReportOptions() : analyzer::ReportOptions{};
    if (format != "html" || top > 0) {
        options.top = top > 0 ? top : analyzer::ReportOptions{}.top;
    }
    return options;
}

void writeReport(const analyzer::Report& report, const std::string& format,
                 const analyzer::TextStyle& style, const std::string& output) {
    analyzer::OutputFile out(output);
    if (format == "json") {
        analyzer::writeJsonText(report, out, 2);
    } else if (format == "html") {
        analyzer::writeHtml(report, [&out](std::string_view piece) { out.write(piece); });
    } else {
        out.write(analyzer::renderText(report, style));
    }
    out.close();
}

} // namespace gmt::cli
