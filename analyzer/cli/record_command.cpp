// `gpumemtrace record [OPTIONS] -- CMD [ARGS...]`: runs CMD with libgpumemtrace.so
// preloaded, exits with CMD's status, and says which traces the run produced.
#include "cli/commands.h"

#include "base/output_file.h"
#include "base/size_parse.h"
#include "base/text_safety.h"
#include "check/suppressions.h"
#include "cli/check_gate.h"
#include "cli/child_process.h"
#include "cli/framework_options.h"
#include "cli/preload_locator.h"
#include "cli/report_input.h"
#include "cli/terminal_style.h"
#include "cli/trace_discovery.h"
#include "cli/untraced_processes.h"
#include "report/trace_report.h"
#include "views/html_report.h"
#include "views/python_status_text.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

#include <gpumemtrace/settings.h>

namespace gmt::cli {

namespace {

struct RecordArgs {
    std::string output = "gpumemtrace.%p.gmtrace";
    std::optional<uint32_t> stack_depth;
    std::optional<uint64_t> buffer_size;
    std::string on_full;
    std::string start;
    std::string log_level;
    std::string library;
    bool quiet = false;
    bool no_python = false;
    bool aggregate = false;
    bool check = false;
    bool html = false;
    CheckOptions check_options;
    std::vector<std::string> command;
};

// Paths are printed the way the user can paste them into the next command.
std::string shellQuote(const std::string& s) {
    if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_-./:=+,@%") == std::string::npos) {
        return s;
    }
    std::string out = "'";
    for (char c : s) {
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
}

std::string relativeToCwd(const std::string& path) {
    char cwd[4096];
    if (!::getcwd(cwd, sizeof cwd)) {
        return path;
    }
    std::string prefix = std::string(cwd) + "/";
    return path.compare(0, prefix.size(), prefix) == 0 ? path.substr(prefix.size()) : path;
}

// `suppress`: the suppressions `report` and `check` would apply (the built-in ones match
// module paths, which need no symbols), so that the summary's leaked figure is theirs.
void summarize(const std::string& path, const analyzer::LeakFilter& suppress) {
    std::string shown = relativeToCwd(path);
    // Colour as the terminal allows, but whole lines: the path is there to be copied.
    analyzer::TextStyle style = terminalStyle(STDERR_FILENO);
    style.width = 0;
    analyzer::StyledText out(style);
    try {
        AnalyzeOptions ao;
        ao.symbols = false; // a summary needs no stacks; symbolizing a big program is slow
        ao.top = 0;
        ao.leak_filter = suppress;
        const analyzer::Report r = analyzeTrace(path, ao);
        const analyzer::Summary& s = r.summary;
        const uint64_t pid = r.processes.empty() ? 0 : r.processes.front().pid;
        const uint64_t events = r.processes.empty() ? 0 : r.processes.front().events;
        std::string line = "pid " + std::to_string(pid) + ": " + std::to_string(events) +
                           " events, leaked " + formatBytes(s.leaked_bytes) + " in " +
                           std::to_string(s.leaked_allocations) + " allocations, peak " +
                           formatBytes(s.peak_bytes);
        if (r.leak_scope.suppressed_bytes) {
            line += " (" + formatBytes(r.leak_scope.suppressed_bytes) + " suppressed)";
        }
        if (s.failed_allocations) {
            line += ", " + std::to_string(s.failed_allocations) + " failed allocations";
        }
        if (s.errors) {
            line += ", " + std::to_string(s.errors) + " errors";
        }
        if (!r.processes.empty() && !r.processes.front().complete) {
            line += " (incomplete trace)";
        }

        out.line({{"gpumemtrace: ", analyzer::Tone::Plain},
                  {line, s.leaked_bytes || s.errors ? analyzer::Tone::Warn : analyzer::Tone::Plain},
                  {" -> " + shown, analyzer::Tone::Plain}});
        if (!r.processes.empty() && r.processes.front().python) {
            out.line("gpumemtrace:   " + analyzer::pythonRuntimeText(*r.processes.front().python));
        }
    } catch (const std::exception& e) {
        // A summary is a courtesy: it never changes the exit status of the run.
        out.line(std::string("gpumemtrace: ") + e.what());
    }
    out.line("gpumemtrace:   see: gpumemtrace report " + shellQuote(shown));
    std::cerr << out.str();
}

// What makes the directory part of `tmpl` impossible to create, or "" when it looks
// creatable: the deepest part that exists must be a directory this user can write in.
// Only the part before the first %-expansion is looked at.
std::string outputDirectoryProblem(const std::string& tmpl) {
    std::string dir = tmpl.substr(0, tmpl.rfind('/') + 1);
    dir = dir.substr(0, dir.find('%'));
    dir = dir.substr(0, dir.rfind('/') + 1);
    while (!dir.empty()) {
        struct stat st {};
        // Without its trailing '/', so that a file there is found (and said to be one).
        std::string path = dir.size() > 1 ? dir.substr(0, dir.size() - 1) : dir;
        if (::stat(path.c_str(), &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                return "cannot create the output directory: " + dir + " is not a directory";
            }
            if (::access(dir.c_str(), W_OK | X_OK) != 0) {
                return "cannot create the output directory: " + dir + " is not writable";
            }
            return {};
        }
        dir.pop_back(); // the trailing '/'
        dir = dir.substr(0, dir.rfind('/') + 1);
    }
    return {};
}

// `record --check`: the traces of the run through the check gate, verdicts on stderr
// (stdout is the command's). The command's own failure wins over the verdict.
int gate(const std::vector<std::string>& traces, const CheckOptions& options, int command_exit) {
    int verdict = kExitOk;
    try {
        verdict = runCheckGate(traces, options, std::cerr, terminalStyle(STDERR_FILENO));
    } catch (const std::exception& e) {
        std::cerr << "gpumemtrace record --check: " << analyzer::printable(e.what()) << '\n';
        verdict = kExitBadInput;
    }
    return command_exit != 0 ? command_exit : verdict;
}

// `record --html`: one page for every trace of the run, next to the first trace (its name
// with .html for .gmtrace). Returns false when it could not be written.
bool writeHtmlReport(const std::vector<std::string>& traces) {
    std::string path = traces.front();
    if (path.size() > 8 && path.compare(path.size() - 8, 8, ".gmtrace") == 0) {
        path.resize(path.size() - 8);
    }
    path += ".html";
    try {
        analyzer::writeOutputFile(path, analyzer::renderHtml(analyzer::reportOfTraces(
                                            traces, analyzer::htmlReportOptions())));
    } catch (const std::exception& e) {
        std::cerr << "gpumemtrace record --html: " << analyzer::printable(e.what()) << '\n';
        return false;
    }
    std::cerr << "gpumemtrace:   html report: " << shellQuote(relativeToCwd(path)) << '\n';
    return true;
}

int runRecord(const RecordArgs& args) {
    if (args.command.empty()) {
        std::cerr << "gpumemtrace record: no command to run (usage: gpumemtrace record "
                     "[OPTIONS] -- CMD [ARGS...])\n";
        return kExitBadInput;
    }
    std::string library = args.library;
    if (library.empty()) {
        auto found = locatePreloadLibrary();
        if (!found) {
            std::string looked;
            for (const std::string& c : preloadCandidates()) {
                looked += (looked.empty() ? "" : ", ") + c;
            }
            std::cerr << "gpumemtrace record: libgpumemtrace.so not found (looked in " << looked
                      << "); pass --library PATH\n";
            return kExitBadInput;
        }
        library = *found;
    } else if (::access(library.c_str(), R_OK) != 0) {
        std::cerr << "gpumemtrace record: " << library << ": cannot read the preload library\n";
        return kExitBadInput;
    } else if (char resolved[PATH_MAX]; ::realpath(library.c_str(), resolved)) {
        library = resolved; // the program may change directory; LD_PRELOAD must not move
    }
    if (auto problem = preloadPathProblem(library)) {
        std::cerr << "gpumemtrace record: the preload library path '" << library << "' " << *problem
                  << "; install gpumemtrace under a path without them, or copy "
                  << "libgpumemtrace.so to one and pass it with --library\n";
        return kExitBadInput;
    }

    if (args.html && !analyzer::htmlReportAvailable()) {
        std::cerr << "gpumemtrace record --html: " << analyzer::htmlReportUnavailableReason()
                  << '\n';
        return kExitBadInput;
    }

    if (args.check && !args.check_options.frameworks.suppressions.empty()) {
        try { // a bad suppressions file must not cost a whole run
            Suppressions::load(args.check_options.frameworks.suppressions);
        } catch (const std::exception& e) {
            std::cerr << "gpumemtrace record: " << e.what() << '\n';
            return kExitBadInput;
        }
    }

    // The child inherits this environment; the recorder reads it once at load time.
    std::string tmpl = absoluteTemplate(args.output);
    // The recorder creates missing directories; one it could not create would only show
    // as "no trace was written" at the end, so a plainly impossible one is refused now.
    if (std::string problem = outputDirectoryProblem(tmpl); !problem.empty()) {
        std::cerr << "gpumemtrace record: " << problem << '\n';
        return kExitBadInput;
    }
    // A fixed name that is a directory, a FIFO or a device is no place for a trace (the
    // recorder never writes into an existing file: it would pick "NAME.1" beside it).
    struct stat st {};
    if (tmpl.find('%') == std::string::npos && ::stat(tmpl.c_str(), &st) == 0 &&
        !S_ISREG(st.st_mode)) {
        std::cerr << "gpumemtrace record: -o " << args.output
                  << " names an existing file that is not a regular file; give a trace "
                     "file path\n";
        return kExitBadInput;
    }
    const char* existing = std::getenv("LD_PRELOAD");
    ::setenv("LD_PRELOAD", withPreload(existing ? existing : "", library).c_str(), 1);
    ::setenv(settings::kOutput.name, tmpl.c_str(), 1);
    // NVTX ranges become phases (preload/hooks/nvtx_injection.cpp), unless another NVTX
    // tool was chosen already: that one keeps the ranges.
    ::setenv("NVTX_INJECTION64_PATH", library.c_str(), 0);
    // The pytest plugin (python/gpumemtrace/pytest_plugin.py) lies next to the library: importable
    // in the run, so `pytest --gpumemtrace` needs nothing installed into Python. Appended: it must
    // not shadow the program's own modules.
    const std::string plugin_dir = library.substr(0, library.rfind('/') + 1) + "gpumemtrace/python";
    if (struct stat st{}; ::stat(plugin_dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
        const char* path = std::getenv("PYTHONPATH");
        ::setenv("PYTHONPATH",
                 (path && *path ? std::string(path) + ":" + plugin_dir : plugin_dir).c_str(), 1);
    }
    if (args.stack_depth) {
        ::setenv(settings::kStackDepth.name, std::to_string(*args.stack_depth).c_str(), 1);
    }
    if (args.buffer_size) {
        // Every traced process allocates its ring in full: a typo must not cost gigabytes
        // of disk per process. The recorder would clamp it too, once per process.
        uint64_t bytes = *args.buffer_size;
        if (bytes > settings::kMaxBufferBytes) {
            bytes = settings::kMaxBufferBytes;
            std::cerr << "gpumemtrace record: --buffer-size " << formatBytes(*args.buffer_size)
                      << " is more than the ring may be; clamped to " << formatBytes(bytes) << '\n';
        }
        ::setenv(settings::kBufferSize.name, std::to_string(bytes).c_str(), 1);
    }
    if (!args.start.empty()) {
        ::setenv(settings::kStart.name, args.start.c_str(), 1);
    }
    if (!args.on_full.empty()) {
        ::setenv(settings::kOnFull.name, args.on_full.c_str(), 1);
    }
    if (!args.log_level.empty()) {
        ::setenv(settings::kLogLevel.name, args.log_level.c_str(), 1);
    }
    if (args.no_python) {
        ::setenv(settings::kPython.name, "0", 1);
    }
    if (args.aggregate) {
        ::setenv(settings::kMode.name, "aggregate", 1);
    }
    const UntracedProcesses untraced_file;
    if (!untraced_file.path().empty()) {
        ::setenv(settings::kFailureFile.name, untraced_file.path().c_str(), 1);
    } else if (args.check) {
        // Without it a run without traces could not be told from one that was not traced.
        std::cerr << "gpumemtrace record --check: " << analyzer::printable(untraced_file.error())
                  << " (where the recorder says why a trace could not be created)\n";
        return kExitBadInput;
    }

    TraceDiscovery discovery(tmpl);
    ChildStatus status = runChild(args.command);
    if (!status.started) {
        std::cerr << "gpumemtrace record: cannot run " << args.command.front() << ": "
                  << status.start_error << '\n';
        return status.exit_code;
    }
    if (status.signal) {
        std::cerr << "gpumemtrace: " << args.command.front() << " was killed by signal "
                  << status.signal << " (" << ::strsignal(status.signal) << ")\n";
    }
    if (args.quiet && !args.check && !args.html) {
        return status.exit_code;
    }
    std::vector<std::string> traces = discovery.newTraces();
    // A process that could not create its trace is missing from the run: said whatever
    // else the run wrote, and never "nothing to check" (a gate must not pass unseen).
    const std::vector<UntracedProcess> untraced = untraced_file.read();
    auto sayUntraced = [&] {
        for (const UntracedProcess& p : untraced) {
            std::cerr << "gpumemtrace" << (args.check ? " record --check: " : ": ") << p.text()
                      << '\n';
        }
    };
    const int untraced_exit = untraced.empty() ? kExitOk : kExitBadInput;
    if (traces.empty()) {
        sayUntraced();
        if (untraced.empty()) {
            std::cerr << "gpumemtrace: no trace was written: " << args.command.front()
                      << (untraced_file.path().empty()
                              ? " did not call CUDA, or its trace could not be created (its "
                                "stderr says)"
                              : " did not call CUDA (or GPUMEMTRACE_ENABLE=0 is set)")
                      << (args.check ? "; nothing to check\n" : "\n");
        }
        return status.exit_code != 0 || !args.check ? status.exit_code : untraced_exit;
    }
    // A report that was asked for and not written fails the run (the command's own
    // failure and the gate's verdict still win), so that CI does not upload a missing page.
    auto html = [&] { return args.html && !writeHtmlReport(traces) ? kExitBadInput : kExitOk; };
    if (args.check) {
        int verdict = gate(traces, args.check_options, status.exit_code);
        sayUntraced(); // after the verdict of the traces there are: the run's last word
        verdict = status.exit_code == 0 && untraced_exit != kExitOk ? untraced_exit : verdict;
        const int html_exit = html();
        return verdict != kExitOk ? verdict : html_exit;
    }
    if (!args.quiet) {
        // Without --check no suppressions file can be given: the built-in rules.
        Suppressions suppressions = suppressionsOf(args.check_options.frameworks);
        const analyzer::LeakFilter suppress = leakFilterOf(suppressions);
        for (const std::string& trace : traces) {
            summarize(trace, suppress);
        }
    }
    sayUntraced();
    const int html_exit = html();
    return status.exit_code != 0 ? status.exit_code : html_exit;
}

} // namespace

void addRecordCommand(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("record", "Run a command with GPU memory tracing");
    auto args = std::make_shared<RecordArgs>();
    // CMD goes after `--`, so its own options are never taken for ours. A command
    // without options also works without `--`; one with options but no `--` is refused
    // with a hint rather than parsed in a surprising order (prefix_command keeps CLI11
    // from rejecting the stray option before the callback can explain).
    cmd->prefix_command();
    cmd->add_option("command", args->command, "The command to run, after --");
    cmd->add_option("-o,--output", args->output,
                    "Trace path template: %p pid, %r rank, %h host, %t start time, "
                    "%q{VAR} environment variable; missing directories are created "
                    "(GPUMEMTRACE_OUTPUT)")
        ->default_str(settings::kOutput.default_value);
    cmd->add_option("--stack-depth", args->stack_depth,
                    "Frames captured per event, 0 for none (GPUMEMTRACE_STACK_DEPTH; default "
                    "64)")
        ->check(CLI::Range(0, 256));
    cmd->add_option("--buffer-size", args->buffer_size,
                    "Event buffer, bytes or K/M/G, at most 256M (GPUMEMTRACE_BUFFER_SIZE; "
                    "default 1M)")
        ->transform(sizeTransform());
    cmd->add_option("--start", args->start,
                    "running records from the first CUDA call; paused records nothing until "
                    "`gpumemtrace control PID resume` (GPUMEMTRACE_START; docs/live.md)")
        ->check(CLI::IsMember({"running", "paused"}));
    cmd->add_flag("--aggregate", args->aggregate,
                  "Keep leaks, peak, growth and failures exact in a trace of bounded size, "
                  "without the event-level timeline (GPUMEMTRACE_MODE=aggregate)");
    cmd->add_option("--on-full", args->on_full,
                    "When the buffer is full: block (lose nothing) or drop (count losses) "
                    "(GPUMEMTRACE_ON_FULL)")
        ->check(CLI::IsMember({"block", "drop"}));
    cmd->add_option("--log-level", args->log_level,
                    "Recorder log level (GPUMEMTRACE_LOG_LEVEL; default warn)")
        ->check(
            CLI::IsMember({"trace", "debug", "info", "warn", "err", "error", "critical", "off"}));
    cmd->add_option("--library", args->library,
                    "The preload library to use (default: ../lib/libgpumemtrace.so next to "
                    "this executable)");
    cmd->add_flag("--no-python", args->no_python,
                  "Native frames only, even in a CPython process (GPUMEMTRACE_PYTHON=0)");
    cmd->add_flag("-q,--quiet", args->quiet, "Do not summarize the traces at the end");
    cmd->add_flag("--html", args->html,
                  "Then write one HTML report of the run's traces next to the first one "
                  "(TRACE.html for TRACE.gmtrace; open it in any browser, offline)");
    CLI::Option* check = cmd->add_flag(
        "--check", args->check,
        "Then gate the traces as `gpumemtrace check` does, verdict on stderr: exit 1 on a "
        "violation, 2 on an unusable trace; CMD's own failure wins");
    std::vector<CLI::Option*> check_options = addCheckOptions(cmd, args->check_options);
    for (CLI::Option* o : addFrameworkOptions(cmd, args->check_options.frameworks, true, false)) {
        check_options.push_back(o);
    }
    for (CLI::Option* o : check_options) {
        o->needs(check)->group("Check options (with --check)");
    }
    cmd->footer("CMD's exit status is passed through (128 + N when signal N killed it); "
                "SIGINT,\nSIGTERM, SIGHUP and SIGQUIT are forwarded to CMD. Every process "
                "that uses CUDA\nwrites its own trace (forked children too).\n\n"
                "Example:\n"
                "  gpumemtrace record -o 'train.%p.gmtrace' -- python train.py --epochs 1\n"
                "  gpumemtrace report train.*.gmtrace\n"
                "  gpumemtrace record --check --max-leaked-bytes 1M -o 'ci/rank%r.gmtrace' -- "
                "torchrun --nproc-per-node 2 train.py");
    cmd->callback([cmd, args, &exit_code] {
        std::vector<std::string> stray = cmd->remaining();
        if (!stray.empty() && stray.front() == "--") {
            stray.erase(stray.begin());
        }
        if (!stray.empty()) {
            std::cerr << "gpumemtrace record: '" << stray.front()
                      << "' is not a record option; put `--` before the command: "
                         "gpumemtrace record [OPTIONS] -- CMD [ARGS...]\n";
            exit_code = kExitBadInput;
            return;
        }
        exit_code = runRecord(*args);
    });
}

} // namespace gmt::cli
