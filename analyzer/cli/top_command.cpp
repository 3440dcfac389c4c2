// `gpumemtrace top PID|TRACE|DIR...`: a live view of running traced processes (docs/live.md),
// redrawn every --interval from their traces as they are written; --once prints one frame
// (scripts, tests). Each trace is read whole at each refresh (the analysis is not
// incremental): the cost of a frame grows with the trace, docs/live.md says how much.
// Reading never touches the process: its trace is a file it writes, read with pread.
#include "cli/commands.h"

#include "base/output_file.h"
#include "base/text_safety.h"
#include "cli/count_option.h"
#include "cli/live_traces.h"
#include "cli/report_input.h"
#include "cli/terminal_style.h"
#include "read/trace_error.h"
#include "views/live_view.h"

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>
#include <unistd.h>

namespace gmt::cli {

namespace {

struct TopArgs {
    std::vector<std::string> targets;
    std::string interval = "1";
    bool once = false;
    size_t top = 10;
    bool no_symbols = false;
};

// Home, clear the screen: each frame is drawn from the top of a clean terminal.
constexpr std::string_view kRedraw = "\x1b[H\x1b[2J";

int runTop(const TopArgs& args) {
    using namespace gmt::analyzer;
    const double interval = parseSeconds(args.interval).value_or(1.0);
    // A PID is looked up once: its /proc entry is gone when it ends, its trace is not.
    const std::vector<std::string> traces = liveTraceInputs(args.targets);
    ReportOptions options;
    options.top = args.top;
    options.symbols = !args.no_symbols;
    const bool redraw = !args.once && isatty(STDOUT_FILENO) == 1;
    const TextStyle style = terminalStyle(STDOUT_FILENO);
    LiveViewOptions view;
    view.sites = args.top;
    if (!args.once) {
        view.refresh = "every " + args.interval + (args.interval.back() == 's' ? "" : " s") +
                       " (Ctrl-C quits)";
    }
    std::optional<LiveSiteBytes> previous;
    for (;;) {
        view.now_wall_ns = wallClockNs();
        std::vector<std::optional<Report>> reports(traces.size());
        std::vector<LiveSource> sources(traces.size());
        bool any_running = false;
        for (size_t i = 0; i < traces.size(); ++i) {
            sources[i].name = traces[i];
            try {
                reports[i] = snapshotOfTraces({traces[i]}, options);
                sources[i].report = &*reports[i];
                any_running = any_running || reports[i]->snapshot->running > 0;
            } catch (const TraceError& e) {
                // Removed, replaced or not a trace (yet): said in its place, the rest shown.
                sources[i].error = e.what();
            }
        }
        LiveSiteBytes current;
        std::string frame =
            renderLiveView(sources, view, previous ? &*previous : nullptr, current, style);
        std::cout << (redraw ? std::string(kRedraw) : std::string()) << frame;
        if (!redraw && !args.once) {
            std::cout << '\n'; // frames one after another in a pipe: a blank line between
        }
        std::cout.flush();
        checkStdout();
        if (args.once || !any_running) {
            return kExitOk;
        }
        previous = std::move(current);
        std::this_thread::sleep_for(std::chrono::duration<double>(interval));
    }
}

} // namespace

void addTopCommand(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "top", "Watch running traced processes: live and peak memory, top sites, growth, "
               "failures");
    auto args = std::make_shared<TopArgs>();
    cmd->add_option("targets", args->targets,
                    "Traced processes' ids, their trace files, or directories of traces (a "
                    "job's ranks)")
        ->type_name("PID|TRACE|DIR")
        ->required();
    cmd->add_option("--interval", args->interval, "Time between refreshes (2, 0.5, 2s, 250ms)")
        ->type_name("PERIOD")
        ->check(checkSeconds)
        ->default_str("1");
    cmd->add_flag("--once", args->once, "Print one frame and exit");
    cmd->add_option("--top", args->top, "Sites listed per process")
        ->check(countRange(1, kMaxTop))
        ->default_str("10");
    cmd->add_flag("--no-symbols", args->no_symbols, "Module + offset frames only (faster)");
    cmd->footer("Redraws in place on a terminal; through a pipe, frames follow each other "
                "without escape codes. Ends when every process has ended.\n\n"
                "Example:\n"
                "  gpumemtrace top 1234\n"
                "  gpumemtrace top traces/            # a job's ranks\n"
                "  gpumemtrace top 1234 --once | grep -A3 'live by site'");
    cmd->callback([args, &exit_code] {
        try {
            exit_code = runTop(*args);
        } catch (const InputError& e) {
            std::cerr << "gpumemtrace top: " << analyzer::printable(e.what()) << '\n';
            exit_code = kExitBadInput;
        }
    });
}

} // namespace gmt::cli
