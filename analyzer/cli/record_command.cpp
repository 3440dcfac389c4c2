// `gpumemtrace record [OPTIONS] -- CMD [ARGS...]`: runs CMD with libgpumemtrace.so
// preloaded, exits with CMD's status, and says which traces the run produced.
#include "commands.h"

#include "child_process.h"
#include "json_fields.h"
#include "preload_locator.h"
#include "report_input.h"
#include "size_parse.h"
#include "trace_discovery.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace gmt::cli {

namespace {

struct RecordArgs {
    std::string output = "gpumemtrace.%p.gmtrace";
    std::optional<uint32_t> stack_depth;
    std::optional<uint64_t> buffer_size;
    std::string on_full;
    std::string log_level;
    std::string library;
    bool quiet = false;
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

void summarize(const std::string& path) {
    std::string shown = relativeToCwd(path);
    try {
        AnalyzeOptions ao;
        ao.symbols = false; // a summary needs no stacks; symbolizing a big program is slow
        ao.all_sites = false;
        Json r = analyzeTrace(path, ao);
        const Json& procs = r["processes"];
        const Json p = procs.is_array() && !procs.empty() ? procs[0] : Json::object();
        const Json& s = r["summary"];
        std::cerr << "gpumemtrace: pid " << p.value("pid", uint64_t{0}) << ": "
                  << p.value("events", uint64_t{0}) << " events, leaked "
                  << formatBytes(s.value("leaked_bytes", uint64_t{0})) << " in "
                  << s.value("leaked_allocations", uint64_t{0}) << " allocations, peak "
                  << formatBytes(s.value("peak_bytes", uint64_t{0}));
        if (uint64_t failed = s.value("failed_allocations", uint64_t{0})) {
            std::cerr << ", " << failed << " failed allocations";
        }
        if (uint64_t errors = s.value("errors", uint64_t{0})) {
            std::cerr << ", " << errors << " errors";
        }
        if (!p.value("complete", true)) {
            std::cerr << " (incomplete trace)";
        }
        std::cerr << " -> " << shown << '\n';
    } catch (const std::exception& e) {
        // A summary is a courtesy: it never changes the exit status of the run.
        std::cerr << "gpumemtrace: " << e.what() << '\n';
    }
    std::cerr << "gpumemtrace:   see: gpumemtrace report " << shellQuote(shown) << '\n';
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

    // The child inherits this environment; the recorder reads it once at load time.
    std::string tmpl = absoluteTemplate(args.output);
    // The recorder cannot create directories; without this check the run would end with
    // a misleading "no trace was written".
    std::string dir = tmpl.substr(0, tmpl.rfind('/') + 1);
    struct stat st {};
    if (dir.find('%') == std::string::npos &&
        (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))) {
        std::cerr << "gpumemtrace record: output directory " << dir << " does not exist\n";
        return kExitBadInput;
    }
    // A fixed name that is a directory, a FIFO or a device is no place for a trace (the
    // recorder never writes into an existing file: it would pick "NAME.1" beside it).
    if (tmpl.find('%') == std::string::npos && ::stat(tmpl.c_str(), &st) == 0 &&
        !S_ISREG(st.st_mode)) {
        std::cerr << "gpumemtrace record: -o " << args.output
                  << " names an existing file that is not a regular file; give a trace "
                     "file path\n";
        return kExitBadInput;
    }
    const char* existing = std::getenv("LD_PRELOAD");
    ::setenv("LD_PRELOAD", withPreload(existing ? existing : "", library).c_str(), 1);
    ::setenv("GPUMEMTRACE_OUTPUT", tmpl.c_str(), 1);
    if (args.stack_depth) {
        ::setenv("GPUMEMTRACE_STACK_DEPTH", std::to_string(*args.stack_depth).c_str(), 1);
    }
    if (args.buffer_size) {
        ::setenv("GPUMEMTRACE_BUFFER_SIZE", std::to_string(*args.buffer_size).c_str(), 1);
    }
    if (!args.on_full.empty()) {
        ::setenv("GPUMEMTRACE_ON_FULL", args.on_full.c_str(), 1);
    }
    if (!args.log_level.empty()) {
        ::setenv("GPUMEMTRACE_LOG_LEVEL", args.log_level.c_str(), 1);
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
    if (args.quiet) {
        return status.exit_code;
    }
    std::vector<std::string> traces = discovery.newTraces();
    if (traces.empty()) {
        std::cerr << "gpumemtrace: no trace was written: " << args.command.front()
                  << " did not call CUDA (or GPUMEMTRACE_ENABLE=0 is set)\n";
    }
    for (const std::string& trace : traces) {
        summarize(trace);
    }
    return status.exit_code;
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
                    "Trace path template: %p pid, %h host, %t start time "
                    "(GPUMEMTRACE_OUTPUT)")
        ->default_str("gpumemtrace.%p.gmtrace");
    cmd->add_option("--stack-depth", args->stack_depth,
                    "Frames captured per event, 0 for none (GPUMEMTRACE_STACK_DEPTH; default "
                    "64)")
        ->check(CLI::Range(0, 256));
    cmd->add_option("--buffer-size", args->buffer_size,
                    "Event buffer, bytes or K/M/G (GPUMEMTRACE_BUFFER_SIZE; default 1M)")
        ->transform(sizeTransform());
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
    cmd->add_flag("-q,--quiet", args->quiet, "Do not summarize the traces at the end");
    cmd->footer("CMD's exit status is passed through (128 + N when signal N killed it); "
                "SIGINT,\nSIGTERM, SIGHUP and SIGQUIT are forwarded to CMD. Every process "
                "that uses CUDA\nwrites its own trace (forked children too).\n\n"
                "Example:\n"
                "  gpumemtrace record -o 'train.%p.gmtrace' -- python train.py --epochs 1\n"
                "  gpumemtrace report train.*.gmtrace");
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
