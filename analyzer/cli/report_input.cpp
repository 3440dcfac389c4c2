#include "report_input.h"

#include "regular_file.h"
#include "report_builder.h"
#include "trace_error.h"

#include <cerrno>
#include <cstring>
#include <limits>
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

Json analyzeTrace(const std::string& path, const AnalyzeOptions& options) {
    requireReadableFile(path);
    using namespace gmt::analyzer;
    try {
        // Holes and pins stay at the analysis default (they are not checked); leak sites
        // are all kept so suppressions and limits see every one.
        AnalysisOptions ao;
        ao.timeline_points = 16;
        Analysis analysis(ao);
        analyzeTraces({path}, analysis);
        ReportOptions ro;
        ro.symbols = options.symbols;
        ro.timeline_points = 16;
        if (options.all_sites) {
            ro.top = std::numeric_limits<size_t>::max();
        }
        return reportJson(analysis, ro);
    } catch (const TraceError& e) {
        throw InputError(e.what());
    }
}

Json loadTraceOrReport(const std::string& path, const AnalyzeOptions& options) {
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
    Json report;
    try {
        report = Json::parse(*text);
    } catch (const std::exception& e) {
        throw InputError(path + ": invalid JSON report: " + e.what());
    }
    if (!report.contains("schema_version") || !report.contains("summary")) {
        throw InputError(path + ": JSON but not a gpumemtrace report (no schema_version)");
    }
    return report;
}

} // namespace gmt::cli
