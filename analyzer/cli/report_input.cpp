#include "cli/report_input.h"

#include "base/helper_threads.h"
#include "base/regular_file.h"
#include "read/trace_error.h"
#include "report/leak_policy.h"
#include "report/report_json.h"
#include "report/trace_report.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <filesystem>
#include <sys/stat.h>
#include <thread>
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
        ro.iteration = options.iteration;
        ro.leak_filter = options.leak_filter;
        ro.caching_allocators = options.caching_allocators;
        ro.user_code = options.user_code;
        ro.until_ns = options.until_ns;
        return analyzer::reportOfTraces({path}, ro);
    } catch (const analyzer::TraceError& e) {
        throw InputError(e.what());
    }
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
    try {
        analyzer::judgeSavedLeaks(report, analyzer::LeakPolicy{options.caching_allocators,
                                                               options.leak_filter, options.top});
    } catch (const analyzer::LeakPolicyError& e) {
        throw InputError(path + ": a saved report judged again: " + e.what());
    }
    return report;
}

} // namespace

bool isTrace(const std::string& path) {
    std::string why;
    std::optional<analyzer::OpenedFile> f = analyzer::openRegularFile(path, why);
    if (!f) {
        throw InputError(path + ": " + why);
    }
    char magic[8] = {};
    ssize_t got = ::pread(f->fd, magic, sizeof magic, 0);
    ::close(f->fd);
    return got == sizeof magic && std::memcmp(magic, "GMTRACE\0", 8) == 0;
}

Report loadTraceOrReport(const std::string& path, const AnalyzeOptions& options) {
    // A report is parsed whole; beyond this it is not one gpumemtrace wrote.
    constexpr uint64_t kMaxReportSize = 1ull << 30;
    if (isTrace(path)) {
        return analyzeTrace(path, options);
    }
    std::string why;
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

namespace {

// The traces (*.gmtrace regular files) under `directory`, at any depth, appended to
// `found`. A directory that cannot be listed (no permission, removed meanwhile) is an
// error naming it and why: skipped, it would pass for a directory without traces, or
// silently leave a rank's traces out of a check.
void collectTraces(const std::filesystem::path& directory, std::vector<std::string>& found) {
    std::error_code ec;
    std::filesystem::directory_iterator it(directory, ec);
    for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
        const std::filesystem::directory_entry& entry = *it;
        std::error_code type_ec;
        // Links to directories are not followed (a loop would never end), as before.
        if (entry.is_directory(type_ec) && !entry.is_symlink(type_ec)) {
            collectTraces(entry.path(), found);
        } else if (entry.path().extension() == ".gmtrace" && entry.is_regular_file(type_ec)) {
            found.push_back(entry.path().string());
        }
    }
    if (ec) {
        throw InputError(directory.string() + ": cannot read the directory: " + ec.message());
    }
}

} // namespace

std::vector<std::string> expandTraceInputs(const std::vector<std::string>& inputs) {
    std::vector<std::string> out;
    for (const std::string& input : inputs) {
        std::error_code ec;
        if (!std::filesystem::is_directory(input, ec)) {
            out.push_back(input);
            continue;
        }
        std::vector<std::string> found;
        collectTraces(input, found);
        if (found.empty()) {
            throw InputError(input + ": a directory without traces (*.gmtrace)");
        }
        std::sort(found.begin(), found.end());
        out.insert(out.end(), found.begin(), found.end());
    }
    return out;
}

std::vector<Report> loadEach(const std::vector<std::string>& inputs, const AnalyzeOptions& options,
                             unsigned jobs) {
    std::vector<Report> reports(inputs.size());
    std::vector<std::exception_ptr> failures(inputs.size());
    std::atomic<size_t> next{0};
    auto work = [&] {
        for (size_t i = next++; i < inputs.size(); i = next++) {
            try {
                reports[i] = loadTraceOrReport(inputs[i], options);
            } catch (...) {
                failures[i] = std::current_exception();
            }
        }
    };
    if (jobs == 0) {
        jobs = std::max(1u, std::thread::hardware_concurrency());
    }
    jobs = static_cast<unsigned>(std::min<size_t>(jobs, inputs.size()));
    std::vector<std::thread> threads;
    analyzer::startHelperThreads(threads, std::max(jobs, 1u) - 1, work);
    work(); // this thread is one of the workers (and reads every input, if it is the only one)
    for (std::thread& t : threads) {
        t.join();
    }
    for (const std::exception_ptr& failure : failures) {
        if (failure) {
            std::rethrow_exception(failure);
        }
    }
    return reports;
}

} // namespace gmt::cli
