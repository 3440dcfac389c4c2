// What every fuzz target does with the trace it built: everything the CLI does with a
// trace file — the report (JSON and text) and the dump — through the same library
// calls. The invariant: a TraceError or a result; never a crash, undefined behaviour, a
// hang or memory out of proportion to the input (libFuzzer's -timeout, -rss_limit_mb and
// -malloc_limit_mb, and the sanitizers, catch those).
#pragma once

#include "record_json.h"
#include "report_builder.h"
#include "text_report.h"
#include "trace_error.h"
#include "trace_reader.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <sys/mman.h>
#include <unistd.h>
#include <vector>

namespace gmt::fuzz {

inline void analyzeFile(const std::vector<uint8_t>& file) {
    int fd = ::memfd_create("gmt-fuzz", 0);
    if (fd < 0 || ::write(fd, file.data(), file.size()) != static_cast<ssize_t>(file.size())) {
        std::abort();
    }
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    try {
        analyzer::ReportOptions options;
        options.symbols = false;
        options.timeline_points = 16;
        options.top = 1000;
        analyzer::Json report = analyzer::buildReport({path}, options);
        (void)analyzer::renderText(report);
        (void)report.dump();
        // Consistency the report promises: the summary is the sum of its processes.
        uint64_t leaked = 0;
        for (const auto& p : report["processes"]) {
            leaked += p["leaked_bytes"].get<uint64_t>();
        }
        if (leaked != report["summary"]["leaked_bytes"].get<uint64_t>()) {
            std::abort();
        }
        analyzer::TraceReader reader(path);
        analyzer::Record record;
        while (reader.next(record)) {
            (void)analyzer::recordJson(record, reader.prologue()).dump();
        }
    } catch (const analyzer::TraceError&) {
    } catch (const analyzer::Json::type_error& e) {
        // 316: a string from the trace that is not UTF-8, which JSON cannot carry as is.
        // Making every string safe is the report views' business (another change);
        // anything else from the JSON library is a finding.
        if (e.id != 316) {
            throw;
        }
    }
    ::close(fd);
}

} // namespace gmt::fuzz
