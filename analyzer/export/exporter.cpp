#include "export/exporter.h"

#include "analysis/trace_analysis.h"
#include "base/output_file.h"
#include "base/text_safety.h"
#include "export/memory_viz_writer.h"
#include "export/ndjson_writer.h"
#include "export/trace_event_writer.h"
#include "read/trace_reader.h"
#include "report/report_builder.h"

#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <set>

namespace gmt::analyzer {

namespace {

std::string stem(const std::string& trace) {
    std::string name = std::filesystem::path(trace).filename().string();
    const std::string suffix = ".gmtrace";
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        name.resize(name.size() - suffix.size());
    }
    return name;
}

std::string outputOrStdout(const std::string& output) {
    return output.empty() ? "-" : output;
}

std::unique_ptr<ExportWriter> makeWriter(const Analysis& analysis,
                                         const std::vector<std::string>& traces,
                                         const ExportOptions& o) {
    const FrameSource frames{o.symbols, o.user_code};
    switch (o.format) {
    case ExportFormat::MemoryViz: {
        std::vector<std::string> outputs = memoryVizOutputs(traces, o.output);
        // Scratch files (a GPU's events other than GPU 0's) go beside the snapshot: the
        // same file system, with room for what the snapshot itself takes.
        const std::string first = outputs.front();
        const std::string scratch =
            first == "-" ? std::filesystem::temp_directory_path().string() : directoryOf(first);
        return std::make_unique<MemoryVizWriter>(analysis, std::move(outputs), scratch, frames,
                                                 o.full_stacks);
    }
    case ExportFormat::Perfetto:
        return std::make_unique<TraceEventWriter>(analysis, outputOrStdout(o.output), frames,
                                                  o.full_stacks);
    case ExportFormat::Folded:
        return std::make_unique<FoldedWriter>(analysis, outputOrStdout(o.output), o.metric, frames,
                                              o.full_stacks);
    case ExportFormat::Ndjson:
        if (o.output.empty() || o.output == "-") {
            throw OutputError("ndjson writes one file per table: give a directory with -o DIR");
        }
        makeDirectory(o.output);
        return std::make_unique<NdjsonWriter>(analysis, o.output, frames);
    }
    throw OutputError("unknown export format");
}

} // namespace

std::vector<std::string> memoryVizOutputs(const std::vector<std::string>& traces,
                                          const std::string& output) {
    if (traces.size() == 1) {
        return {outputOrStdout(output)};
    }
    if (output.empty() || output == "-") {
        throw OutputError("memory-viz writes one snapshot per process: with several traces, "
                          "give a directory with -o DIR");
    }
    makeDirectory(output);
    std::vector<std::string> outputs;
    std::set<std::string> names;
    for (const std::string& trace : traces) {
        const std::string name = stem(trace) + ".pickle";
        if (!names.insert(name).second) {
            throw OutputError("two traces would both be written to " +
                              printable(output + "/" + name) + ": rename one of them");
        }
        outputs.push_back(output + "/" + name);
    }
    return outputs;
}

void exportTraces(const std::vector<std::string>& traces, const ExportOptions& options) {
    // An unreadable trace fails the command before any output file is created.
    for (const std::string& trace : traces) {
        TraceReader check(trace);
    }
    Analysis analysis;
    std::unique_ptr<ExportWriter> writer = makeWriter(analysis, traces, options);
    analysis.setLifetimeObserver(writer.get());
    analyzeTraces(traces, analysis,
                  [&](uint32_t process, const Record& r) { writer->record(process, r); });
    std::optional<Report> report;
    if (writer->needsReport()) {
        ReportOptions ro;
        ro.top = std::numeric_limits<size_t>::max(); // every site: the tables are complete
        ro.symbols = options.symbols;
        ro.user_code = options.user_code;
        report = makeReport(analysis, ro);
    }
    writer->finish(report ? &*report : nullptr);
}

} // namespace gmt::analyzer
