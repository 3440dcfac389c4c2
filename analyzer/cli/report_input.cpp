#include "report_input.h"

#include "report_builder.h"
#include "trace_error.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
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
    Json report;
    try {
        report = Json::parse(in);
    } catch (const std::exception& e) {
        throw InputError(path + ": invalid JSON report: " + e.what());
    }
    if (!report.contains("schema_version") || !report.contains("summary")) {
        throw InputError(path + ": JSON but not a gpumemtrace report (no schema_version)");
    }
    return report;
}

} // namespace gmt::cli
