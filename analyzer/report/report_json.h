// The JSON view of the report (docs/report.schema.json) and its reader. The only place
// that knows the JSON field names: every other view reads the typed Report.
#pragma once

#include "base/json.h"
#include "model/report.h"

#include <stdexcept>
#include <string>

namespace gmt::analyzer {

// The report as JSON; strings from the trace made valid UTF-8 (invalid bytes -> U+FFFD).
Json toJson(const Report& report);

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

// One frame of a report's JSON (a member of a "stack" array), read as fromJson reads it.
Frame frameFromJson(const Json& frame);

} // namespace gmt::analyzer
