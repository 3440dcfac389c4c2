// Turning command-line inputs into reports for `check`, `diff` and `record`'s summary:
// a trace is analysed, a JSON report (from `gpumemtrace report --format json`) is read
// as is. Every problem becomes one InputError line naming the file, exit status 2.
#pragma once

#include "json.h"

#include <stdexcept>
#include <string>

namespace gmt::cli {

using gmt::analyzer::Json;

class InputError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct AnalyzeOptions {
    bool symbols = true;
    bool all_sites = true; // every leak site, not only the report's top 10
};

// The report of one trace (one process).
Json analyzeTrace(const std::string& path, const AnalyzeOptions& options);

// A trace (magic "GMTRACE\0") or a JSON report (first non-blank byte '{'), by content.
Json loadTraceOrReport(const std::string& path, const AnalyzeOptions& options);

// Throws InputError unless `path` is an existing readable regular file.
void requireReadableFile(const std::string& path);

} // namespace gmt::cli
