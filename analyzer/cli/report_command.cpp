// `gpumemtrace report TRACE...`: the analysis report, JSON (the DESIGN §4 contract) or
// text. Several traces (one per process) give one report.
#include "commands.h"

#include "count_option.h"
#include "output_file.h"
#include "report_builder.h"
#include "text_report.h"
#include "timeline.h"
#include "trace_error.h"

#include <iostream>
#include <memory>
#include <unistd.h>

namespace gmt::cli {

namespace {
struct ReportArgs {
    std::vector<std::string> traces;
    std::string format;
    std::string output;
    size_t top = 10;
    size_t timeline_points = 2000;
    bool no_symbols = false;
};
} // namespace

void addReportCommand(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("report", "Analyse traces: leaks, peak, fragmentation, "
                                             "failures, errors");
    auto args = std::make_shared<ReportArgs>();
    cmd->add_option("traces", args->traces, "Trace files, one per process")->required();
    cmd->add_option("--format", args->format,
                    "json or text (default: text on a terminal, else json)")
        ->check(CLI::IsMember({"json", "text"}));
    cmd->add_option("-o,--output", args->output, "Write the report to FILE");
    cmd->add_option("--top", args->top, "Leaks, peak sites and holes listed")
        ->check(countRange(1, kMaxTop));
    cmd->add_flag("--no-symbols", args->no_symbols, "Module + offset frames only");
    cmd->add_option("--timeline-points", args->timeline_points,
                    "Timeline points per device (each keeps its bucket's maximum)")
        ->check(countRange(1, analyzer::kMaxTimelinePoints));
    cmd->callback([args, &exit_code] {
        using namespace gmt::analyzer;
        ReportOptions options;
        options.top = args->top;
        options.timeline_points = args->timeline_points;
        options.symbols = !args->no_symbols;
        std::string format = args->format;
        if (format.empty()) {
            format = args->output.empty() && ::isatty(STDOUT_FILENO) ? "text" : "json";
        }
        Json report;
        try {
            report = buildReport(args->traces, options);
        } catch (const TraceError& e) {
            std::cerr << "gpumemtrace: " << e.what() << '\n';
            exit_code = kExitBadInput;
            return;
        }
        std::string text = format == "text" ? renderText(report) : report.dump(2) + "\n";
        if (args->output.empty()) {
            writeStdout(text);
        } else {
            writeOutputFile(args->output, text);
        }
        exit_code = kExitOk;
    });
}

} // namespace gmt::cli
