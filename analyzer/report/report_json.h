// The JSON view of the report (docs/report.schema.json) and its reader. The only place
// that knows the JSON field names: every other view reads the typed Report.
#pragma once

#include "base/json.h"
#include "base/json_sink.h"
#include "base/output_file.h"
#include "model/report.h"

#include <functional>
#include <stdexcept>
#include <string>

namespace gmt::analyzer {

// The report as JSON; strings from the trace made valid UTF-8 (invalid bytes -> U+FFFD).
Json toJson(const Report& report);

// What toJson writes for a stack. By default an array of frameJson() objects; the HTML
// page (views/html_report.h) writes indices into its table of distinct frames instead,
// in the same single pass.
using StackJson = std::function<Json(const Stack&)>;
Json toJson(const Report& report, const StackJson& stack);

// The report as JSON text appended to `out`: byte for byte jsonText(toJson(report[,
// *stack]), indent), without the tree, which for a report listing every stack of a large
// trace takes several times the memory of the text.
// With `drain`, the text goes on to it a megabyte at a time (json_sink.h), what is left of it
// staying in `out`.
void writeJsonText(const Report& report, std::string& out, int indent,
                   const StackJson* stack = nullptr, const JsonTextSink::Drain& drain = {});
// The same text into `file` as it is made (then a newline), never whole in memory.
void writeJsonText(const Report& report, OutputFile& file, int indent);

// One frame as toJson writes it in a stack.
Json frameJson(const Frame& frame);

// A field of a saved report that is missing or of the wrong type, named by its path:
// "leaks[3].bytes: expected an unsigned integer".
class ReportFormatError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// A saved JSON report, read back strictly: every field the schema requires must be there
// with its type; optional fields are checked when present; unknown fields are ignored (a
// newer gpumemtrace may add some). Throws ReportFormatError.
Report fromJson(const Json& json);

} // namespace gmt::analyzer
