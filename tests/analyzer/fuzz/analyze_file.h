// What every fuzz target does with the trace it built: everything the CLI does with a
// trace file — the report (JSON, read back by the strict reader, and text) and the
// dump — through the same library calls. The invariant: a TraceError or a result; never
// a crash, undefined behaviour, a hang or memory out of proportion to the input
// (libFuzzer's -timeout, -rss_limit_mb and -malloc_limit_mb, and the sanitizers, catch
// those).
#pragma once

#include "base/json_sink.h"
#include "read/record_json.h"
#include "read/trace_error.h"
#include "read/trace_reader.h"
#include "report/report_json.h"
#include "report/trace_report.h"
#include "views/text_report.h"

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
        const analyzer::Report report = analyzer::reportOfTraces({path}, options);
        (void)analyzer::renderText(report);
        // The JSON a person saves must read back: the writer and the strict reader agree.
        const analyzer::Json json = analyzer::toJson(report);
        const std::string text = analyzer::jsonText(json, 2);
        (void)analyzer::fromJson(analyzer::Json::parse(text));
        // The text `report --format json` writes without a tree is the tree's text.
        std::string streamed;
        analyzer::writeJsonText(report, streamed, 2);
        if (streamed != text) {
            std::abort();
        }
        // Consistency the report promises: the summary is the sum of its processes.
        uint64_t leaked = 0;
        for (const analyzer::ProcessReport& p : report.processes) {
            leaked += p.leaked_bytes;
        }
        if (leaked != report.summary.leaked_bytes) {
            std::abort();
        }
        // `dump`'s lines, written as text, are each record's tree's text.
        analyzer::TraceReader reader(path);
        analyzer::Record record;
        std::string line;
        analyzer::JsonTextSink sink(line, -1);
        while (reader.next(record)) {
            line.clear();
            analyzer::writeRecordJson(record, reader.prologue(), sink);
            if (line != analyzer::jsonText(analyzer::recordJson(record, reader.prologue()))) {
                std::abort();
            }
        }
    } catch (const analyzer::TraceError&) {
    }
    ::close(fd);
}

} // namespace gmt::fuzz
