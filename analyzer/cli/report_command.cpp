// `gpumemtrace report TRACE...`: the analysis report as text (the default, on a terminal
// or not), JSON (docs/report.schema.json) or a self-contained HTML page
// (docs/html-report.md). Several traces (one per process) give one report.
#include "cli/commands.h"

#include "analysis/timeline.h"
#include "base/output_file.h"
#include "base/text_safety.h"
#include "cli/count_option.h"
#include "cli/framework_options.h"
#include "cli/path_option.h"
#include "cli/report_input.h"
#include "cli/report_output.h"
#include "cli/terminal_style.h"
#include "model/report.h"
#include "read/trace_error.h"
#include "report/trace_report.h"
#include "views/html_report.h"

#include <iostream>
#include <memory>
#include <optional>
#include <unistd.h>

namespace gmt::cli {

namespace {

struct ReportArgs {
    std::vector<std::string> traces;
    std::string format;
    std::string output;
    size_t top = 10;
    bool top_given = false;
    size_t timeline_points = 2000;
    size_t frames = 8;
    bool full_stacks = false;
    bool python_only = false;
    bool no_symbols = false;
    std::optional<std::string> phase;
    std::optional<std::string> iteration;
    FrameworkOptions frameworks;
};

int runReport(const ReportArgs& args) {
    using namespace gmt::analyzer;
    const std::string format = reportFormat(args.format, args.output);
    if (format == "html" && !htmlReportAvailable()) {
        std::cerr << "gpumemtrace report: " << htmlReportUnavailableReason() << '\n';
        return kExitBadInput;
    }
    ReportOptions options = reportOptionsFor(format, args.top_given ? args.top : 0);
    options.timeline_points = args.timeline_points;
    options.symbols = !args.no_symbols;
    options.phase = args.phase;
    options.iteration = args.iteration;
    // JSON carries what the HTML page shows of the what-if replays (text leaves them to
    // `gpumemtrace whatif`).
    options.what_if = format != "text";
    options.caching_allocators = cachingAllocatorTable(args.frameworks);
    options.user_code.roots = args.frameworks.user_code;
    // The same rules as `check`: the leaks it would not fail on are not leaks here either.
    Suppressions suppressions = suppressionsOf(args.frameworks);
    options.leak_filter = leakFilterOf(suppressions);
    Report report = reportOfTraces(cli::expandTraceInputs(args.traces), options);
    report.suppressions = usedLeakSuppressions(suppressions);

    TextStyle style = args.output.empty() ? terminalStyle(STDOUT_FILENO) : TextStyle{};
    style.stacks.full = args.full_stacks;
    style.stacks.python_only = args.python_only;
    style.stacks.max_frames = args.frames;
    // A failed write (a full disk, /dev/full) is an OutputError: one line, exit 2 (main).
    writeReport(report, format, style, args.output.empty() ? "-" : args.output);
    return kExitOk;
}

} // namespace

void addReportCommand(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("report", "Analyse traces: leaks, peak, fragmentation, "
                                             "failures, errors, phases");
    auto args = std::make_shared<ReportArgs>();
    cmd->add_option("traces", args->traces,
                    "Trace files, one per process, or directories of them (a job's ranks: "
                    "the report has a per-rank table)")
        ->type_name("TRACE");
    cmd->add_option("--format", args->format,
                    "text, json or html (default: text; json or html when -o names a .json or "
                    ".html file)")
        ->check(CLI::IsMember({"json", "text", "html"}));
    cmd->add_option("-o,--output", args->output, "Write the report to FILE")
        ->type_name("FILE")
        ->check(nonEmptyPath());
    CLI::Option* top =
        cmd->add_option("--top", args->top, "Leaks, peak sites, holes and pins listed")
            ->check(countRange(1, kMaxTop))
            ->default_str("10; html: 100");
    cmd->add_option("--frames", args->frames,
                    "Native frames shown per stack in text (Python frames: all)")
        ->check(countRange(1, kMaxShownFrames))
        ->default_str("8");
    cmd->add_flag("--full-stacks", args->full_stacks,
                  "Show every frame in text, also the recorder's, the CUDA libraries' and "
                  "headers' and libc start-up");
    cmd->add_flag("--python-only", args->python_only,
                  "In text, of the native frames show only the one that called CUDA (and the "
                  "CUDA function, when recorded); Python frames all");
    cmd->add_option("--phase", args->phase,
                    "List the leaks and growth of phase NAME and the phases nested in it "
                    "(gpumemtrace_mark_phase, gpumemtrace_push_phase, NVTX ranges)")
        ->type_name("NAME");
    cmd->add_option("--iteration", args->iteration,
                    "The phase NAME whose marks or pushes begin iterations, for the growth "
                    "analysis (default: the outermost phase marked most often, else the "
                    "allocation pattern)")
        ->type_name("NAME");
    cmd->add_flag("--no-symbols", args->no_symbols,
                  "Module + offset frames only (faster); caching allocators are then "
                  "recognised without function names, so what a cache holds at exit can be "
                  "listed as leaked");
    cmd->add_option("--timeline-points", args->timeline_points,
                    "Timeline points per device in JSON (each keeps its bucket's maximum)")
        ->check(countRange(1, analyzer::kMaxTimelinePoints))
        ->default_str("2000");
    addFrameworkOptions(cmd, args->frameworks, true);
    cmd->footer(
        "Text is coloured on a terminal (not with NO_COLOR set) and fitted to its width.\n\n"
        "Example:\n"
        "  gpumemtrace report gpumemtrace.1234.gmtrace\n"
        "  gpumemtrace report app.*.gmtrace --format json -o report.json\n"
        "  gpumemtrace report app.*.gmtrace --format html -o report.html   # open it offline");
    cmd->callback([args, top, &exit_code] {
        args->top_given = top->count() > 0;
        try {
            if (printFrameworkTables(args->frameworks, std::cout)) {
                exit_code = kExitOk;
                return;
            }
            if (args->traces.empty()) {
                throw CLI::RequiredError("traces");
            }
            exit_code = runReport(*args);
        } catch (const analyzer::TraceError& e) {
            std::cerr << "gpumemtrace: " << analyzer::printable(e.what()) << '\n';
            exit_code = kExitBadInput;
        } catch (const SuppressionError& e) {
            std::cerr << "gpumemtrace report: " << analyzer::printable(e.what()) << '\n';
            exit_code = kExitBadInput;
        } catch (const InputError& e) {
            std::cerr << "gpumemtrace report: " << analyzer::printable(e.what()) << '\n';
            exit_code = kExitBadInput;
        }
    });
}

} // namespace gmt::cli
