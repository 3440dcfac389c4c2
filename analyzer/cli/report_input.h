// Turning command-line inputs into reports for `check`, `diff` and `record`'s summary:
// a trace is analysed, a JSON report (from `gpumemtrace report --format json`) is read
// back strictly. Every problem becomes one InputError line naming the file, exit status 2.
#pragma once

#include "report.h"

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace gmt::cli {

using analyzer::Report;

class InputError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct AnalyzeOptions {
    bool symbols = true;
    size_t top = 10;                  // leak and peak sites listed with their stacks
    std::optional<std::string> phase; // leaks of this phase only (analyzer::LeakScope)
    // Suppressed leak sites (see analyzer::ReportOptions::leak_filter).
    std::function<bool(const analyzer::LeakSite&)> leak_filter;
    // What is held at exit rather than leaked (analyzer::ReportOptions::caching_allocators).
    std::shared_ptr<const analyzer::CachingAllocatorTable> caching_allocators =
        analyzer::CachingAllocatorTable::builtin();
};

// The report of one trace (one process).
Report analyzeTrace(const std::string& path, const AnalyzeOptions& options);

// A trace (magic "GMTRACE\0") or a JSON report (first non-blank byte '{'), by content. A
// JSON report lists only its top leak sites: the filter sees those, the rest stays
// unsuppressed; a phase must be the one the report was made for.
Report loadTraceOrReport(const std::string& path, const AnalyzeOptions& options);

// What analyzer::ReportOptions::leak_filter does, for a report made without one (a saved
// one): the listed sites the filter matches move to the leak scope's suppressed figures.
void filterListedLeaks(Report& report,
                       const std::function<bool(const analyzer::LeakSite&)>& filter);

// Throws InputError unless `path` is an existing readable regular file.
void requireReadableFile(const std::string& path);

} // namespace gmt::cli
