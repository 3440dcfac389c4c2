#include "report_input.h"

#include "framework_options.h"
#include "regular_file.h"
#include "report_json.h"
#include "trace_error.h"
#include "trace_report.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace gmt::cli {

void requireReadableFile(const std::string& path) {
    std::string why;
    std::optional<analyzer::OpenedFile> f = analyzer::openRegularFile(path, why);
    if (!f) {
        // An unexpanded shell glob means the run wrote no trace at all.
        if (why == std::strerror(ENOENT) && path.find_first_of("*?[") != std::string::npos) {
            why += " (no file matches; did the program call CUDA under gpumemtrace record?)";
        }
        throw InputError(path + ": " + why);
    }
    ::close(f->fd);
}

Report analyzeTrace(const std::string& path, const AnalyzeOptions& options) {
    requireReadableFile(path);
    try {
        analyzer::ReportOptions ro;
        ro.symbols = options.symbols;
        ro.timeline_points = 16; // no view of these reports shows the timeline
        ro.top = options.top;
        ro.phase = options.phase;
        ro.leak_filter = options.leak_filter;
        ro.caching_allocators = options.caching_allocators;
        return analyzer::reportOfTraces({path}, ro);
    } catch (const analyzer::TraceError& e) {
        throw InputError(e.what());
    }
}

void filterListedLeaks(Report& report,
                       const std::function<bool(const analyzer::LeakSite&)>& filter) {
    analyzer::LeakScope& scope = report.leak_scope;
    std::vector<analyzer::LeakSite> kept;
    for (analyzer::LeakSite& site : report.leaks) {
        if (filter(site)) {
            scope.bytes -= std::min(scope.bytes, site.bytes);
            scope.allocations -= std::min(scope.allocations, site.allocations);
            scope.sites -= std::min<uint64_t>(scope.sites, 1);
            scope.suppressed_bytes += site.bytes;
            scope.suppressed_allocations += site.allocations;
            ++scope.suppressed_sites;
        } else {
            kept.push_back(std::move(site));
        }
    }
    report.leaks = std::move(kept);
}

namespace {

Report readJsonReport(const std::string& path, const std::string& text,
                      const AnalyzeOptions& options) {
    analyzer::Json json;
    try {
        json = analyzer::Json::parse(text);
    } catch (const std::exception& e) {
        throw InputError(path + ": invalid JSON report: " + e.what());
    }
    Report report;
    try {
        report = analyzer::fromJson(json);
    } catch (const analyzer::ReportFormatError& e) {
        throw InputError(path + ": " + e.what());
    }
    if (options.phase && report.leak_scope.phase != options.phase) {
        throw InputError(path + ": a saved report lists the leaks of " +
                         (report.leak_scope.phase ? "phase " + *report.leak_scope.phase
                                                  : std::string("the whole run")) +
                         ", not of phase " + *options.phase + "; give the trace instead");
    }
    applyCachingAllocators(report, options.caching_allocators);
    if (options.leak_filter) {
        filterListedLeaks(report, options.leak_filter);
    }
    return report;
}

} // namespace

Report loadTraceOrReport(const std::string& path, const AnalyzeOptions& options) {
    // A report is parsed whole; beyond this it is not one gpumemtrace wrote.
    constexpr uint64_t kMaxReportSize = 1ull << 30;
    std::string why;
    std::optional<analyzer::OpenedFile> f = analyzer::openRegularFile(path, why);
    if (!f) {
        throw InputError(path + ": " + why);
    }
    char magic[8] = {};
    ssize_t got = ::pread(f->fd, magic, sizeof magic, 0);
    ::close(f->fd);
    if (got == sizeof magic && std::memcmp(magic, "GMTRACE\0", 8) == 0) {
        return analyzeTrace(path, options);
    }
    std::optional<std::string> text = analyzer::readRegularFile(path, kMaxReportSize, why);
    if (!text) {
        throw InputError(path + ": " + why);
    }
    size_t first = text->find_first_not_of(" \t\r\n\f\v");
    if (first == std::string::npos || (*text)[first] != '{') {
        throw InputError(path + ": neither a gpumemtrace trace nor a JSON report");
    }
    return readJsonReport(path, *text, options);
}

} // namespace gmt::cli
