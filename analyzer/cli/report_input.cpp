#include "report_input.h"

#include "report_json.h"
#include "trace_error.h"
#include "trace_report.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sys/stat.h>

namespace gmt::cli {

void requireReadableFile(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        std::string reason = std::strerror(errno);
        // An unexpanded shell glob means the run wrote no trace at all.
        if (path.find_first_of("*?[") != std::string::npos) {
            reason += " (no file matches; did the program call CUDA under gpumemtrace record?)";
        }
        throw InputError(path + ": " + reason);
    }
    if (!S_ISREG(st.st_mode)) {
        throw InputError(path + ": not a regular file");
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw InputError(path + ": cannot open: " + std::strerror(errno));
    }
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

Report readJsonReport(const std::string& path, std::ifstream& in, const AnalyzeOptions& options) {
    analyzer::Json json;
    try {
        json = analyzer::Json::parse(in);
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
    if (options.leak_filter) {
        filterListedLeaks(report, options.leak_filter);
    }
    return report;
}

} // namespace

Report loadTraceOrReport(const std::string& path, const AnalyzeOptions& options) {
    requireReadableFile(path);
    std::ifstream in(path, std::ios::binary);
    char magic[8] = {};
    in.read(magic, sizeof magic);
    if (in.gcount() == sizeof magic && std::memcmp(magic, "GMTRACE\0", 8) == 0) {
        return analyzeTrace(path, options);
    }
    in.clear();
    in.seekg(0);
    char c = 0;
    while (in.get(c) && std::isspace(static_cast<unsigned char>(c))) {
    }
    if (c != '{') {
        throw InputError(path + ": neither a gpumemtrace trace nor a JSON report");
    }
    in.unget();
    return readJsonReport(path, in, options);
}

} // namespace gmt::cli
