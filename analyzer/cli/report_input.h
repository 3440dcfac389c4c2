// Turning command-line inputs into reports for `check`, `diff` and `record`'s summary:
// a trace is analysed, a JSON report (from `gpumemtrace report --format json`) is read
// back strictly. Every problem becomes one InputError line naming the file, exit status 2.
#pragma once

#include "model/report.h"
#include "report/report_builder.h"

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gmt::cli {

using analyzer::Report;

class InputError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct AnalyzeOptions {
    bool symbols = true;
    size_t top = 10;                      // leak and peak sites listed with their stacks
    std::optional<std::string> phase;     // leaks of this phase only (analyzer::LeakScope)
    std::optional<std::string> iteration; // analyzer::ReportOptions::iteration
    // Suppressed leak sites (see analyzer::ReportOptions::leak_filter).
    analyzer::LeakFilter leak_filter;
    // What is held at exit rather than leaked (analyzer::ReportOptions::caching_allocators).
    std::shared_ptr<const analyzer::CachingAllocatorTable> caching_allocators =
        analyzer::CachingAllocatorTable::builtin();
    analyzer::UserCodeOptions user_code; // analyzer::ReportOptions::user_code
    uint64_t until_ns = UINT64_MAX;      // analyzer::ReportOptions::until_ns (traces only)
};

// The report of one trace (one process).
Report analyzeTrace(const std::string& path, const AnalyzeOptions& options);

// A trace (magic "GMTRACE\0") or a JSON report (first non-blank byte '{'), by content. A
// JSON report is judged again by the leak policy the options describe
// (analyzer::judgeSavedLeaks): it lists only its top leak sites, so the filter sees those
// and the rest stays unsuppressed; a phase must be the one the report was made for.
Report loadTraceOrReport(const std::string& path, const AnalyzeOptions& options);

// Whether `path` is a trace (magic "GMTRACE\0") rather than anything else; throws
// InputError when it cannot be opened as a regular file.
bool isTrace(const std::string& path);

// The inputs with each directory replaced by the traces under it (*.gmtrace, at any depth,
// sorted): what `gpumemtrace record -o 'DIR/rank%r.gmtrace'` left for a job. Throws
// InputError for a directory without traces, or one (at any depth) that cannot be read.
std::vector<std::string> expandTraceInputs(const std::vector<std::string>& inputs);

// loadTraceOrReport of every input, on `jobs` threads at once (0: one per core), each input
// analysed on its own: independent processes need nothing of each other (only figures of
// several processes at the same moment do, which `report` computes in one time-ordered
// pass instead). In input order; the first failing input's InputError is thrown.
// `options.leak_filter` must be safe to call from several threads.
std::vector<Report> loadEach(const std::vector<std::string>& inputs, const AnalyzeOptions& options,
                             unsigned jobs);

// Throws InputError unless `path` is an existing readable regular file.
void requireReadableFile(const std::string& path);

} // namespace gmt::cli
