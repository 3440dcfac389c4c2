// `gpumemtrace snapshot PID|TRACE...`: the report of running processes, read from their
// traces while they are written (docs/live.md), in `report`'s formats; what is live is
// "live now", not leaked. With --every, one numbered file per period, for servers that
// run unattended.
#include "cli/commands.h"

#include "base/output_file.h"
#include "base/text_safety.h"
#include "cli/count_option.h"
#include "cli/live_traces.h"
#include "cli/path_option.h"
#include "cli/report_input.h"
#include "cli/report_output.h"
#include "cli/terminal_style.h"
#include "read/trace_error.h"
#include "views/html_report.h"

#include <chrono>
#include <iostream>
#include <memory>
#include <thread>
#include <unistd.h>

namespace gmt::cli {

namespace {

struct SnapshotArgs {
    std::vector<std::string> targets;
    std::string output;
    std::string format;
    std::string every;
    size_t count = 0; // 0: one without --every, no limit with it
    size_t top = 0;
    bool no_symbols = false;
};

// `pattern` with each "%n" replaced by `n`.
std::string numbered(const std::string& pattern, size_t n) {
    std::string out;
    for (size_t i = 0; i < pattern.size(); ++i) {
        if (pattern.compare(i, 2, "%n") == 0) {
            out += std::to_string(n);
            ++i;
        } else {
            out += pattern[i];
        }
    }
    return out;
}

int runSnapshot(const SnapshotArgs& args) {
    using namespace gmt::analyzer;
    const std::string format = reportFormat(args.format, args.output);
    if (format == "html" && !htmlReportAvailable()) {
        std::cerr << "gpumemtrace snapshot: " << htmlReportUnavailableReason() << '\n';
        return kExitBadInput;
    }
    const std::optional<double> every =
        args.every.empty() ? std::nullopt : parseSeconds(args.every);
    const size_t count = args.count > 0 ? args.count : (every ? 0 : 1);
    if (count != 1 && !args.output.empty() && args.output.find("%n") == std::string::npos) {
        throw InputError("-o " + args.output +
                         ": several snapshots need a numbered name (%n, e.g. snap-%n.json)");
    }
    if (count != 1 && !every) {
        throw InputError("--count needs --every (how long between snapshots)");
    }
    // A PID is looked up once: its /proc entry is gone when it ends, its trace is not.
    const std::vector<std::string> traces = liveTraceInputs(args.targets);
    ReportOptions options = reportOptionsFor(format, args.top);
    options.symbols = !args.no_symbols;
    options.what_if = false; // a snapshot is quick; `gpumemtrace whatif` replays the trace
    for (size_t n = 1; count == 0 || n <= count; ++n) {
        if (n > 1) {
            std::this_thread::sleep_for(std::chrono::duration<double>(*every));
        }
        const Report report = snapshotOfTraces(traces, options);
        const std::string output = args.output.empty() ? "-" : numbered(args.output, n);
        const TextStyle style = output == "-" ? terminalStyle(STDOUT_FILENO) : TextStyle{};
        writeReport(report, format, style, output);
        if (report.snapshot->running == 0 && every) {
            break; // every process has ended: this one was the last there is to take
        }
    }
    return kExitOk;
}

} // namespace

void addSnapshotCommand(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("snapshot", "Report what running processes hold now, from "
                                               "the traces they are writing");
    auto args = std::make_shared<SnapshotArgs>();
    cmd->add_option("targets", args->targets,
                    "Traced processes' ids, their trace files, or directories of traces")
        ->type_name("PID|TRACE|DIR")
        ->required();
    cmd->add_option("-o,--output", args->output,
                    "Write the snapshot to FILE; %n in it is the snapshot's number (1, 2, ...)")
        ->type_name("FILE")
        ->check(nonEmptyPath());
    cmd->add_option("--format", args->format,
                    "text, json or html (default: text; json or html when -o names a .json or "
                    ".html file)")
        ->check(CLI::IsMember({"json", "text", "html"}));
    cmd->add_option("--every", args->every,
                    "Take a snapshot every period (seconds: 60, 60s, 500ms) until the "
                    "processes end or --count are taken")
        ->type_name("PERIOD")
        ->check(checkSeconds);
    cmd->add_option("--count", args->count, "Take this many snapshots (with --every)")
        ->check(countRange(1, kMaxTop));
    cmd->add_option("--top", args->top, "Live and peak sites listed")
        ->check(countRange(1, kMaxTop))
        ->default_str("10; html: 100");
    cmd->add_flag("--no-symbols", args->no_symbols, "Module + offset frames only (faster)");
    cmd->footer("The processes keep running: their traces are read as written (docs/live.md). "
                "`gpumemtrace check` takes a JSON snapshot as it takes a report.\n\n"
                "Example:\n"
                "  gpumemtrace snapshot 1234\n"
                "  gpumemtrace snapshot 1234 -o now.json\n"
                "  gpumemtrace snapshot app.1234.gmtrace --every 600s -o snap-%n.json\n"
                "  gpumemtrace snapshot 1234 --every 60 --count 5 -o snap-%n.html");
    cmd->callback([args, &exit_code] {
        try {
            exit_code = runSnapshot(*args);
        } catch (const analyzer::TraceError& e) {
            std::cerr << "gpumemtrace: " << analyzer::printable(e.what()) << '\n';
            exit_code = kExitBadInput;
        } catch (const InputError& e) {
            std::cerr << "gpumemtrace snapshot: " << analyzer::printable(e.what()) << '\n';
            exit_code = kExitBadInput;
        }
    });
}

} // namespace gmt::cli
