// A report as `report` writes it: text, JSON (docs/report.schema.json) or HTML
// (docs/html-report.md), chosen by --format or by the output file's extension. `report`
// and `snapshot` write the same way.
#pragma once

#include "model/report.h"
#include "report/report_builder.h"
#include "views/styled_text.h"

#include <string>

namespace gmt::cli {

// --format as given, else by the extension of `output` (".json", ".html"), else text.
std::string reportFormat(const std::string& format, const std::string& output);

// The options a report in `format` is made with: HTML's detail and longer lists, `top`
// when given (0: the format's default).
analyzer::ReportOptions reportOptionsFor(const std::string& format, size_t top);

// The report in `format` written to `output` ("-": standard output); `style` is the text's
// (colour, width, stacks). JSON is written as it is made; throws OutputError.
void writeReport(const analyzer::Report& report, const std::string& format,
                 const analyzer::TextStyle& style, const std::string& output);

} // namespace gmt::cli
