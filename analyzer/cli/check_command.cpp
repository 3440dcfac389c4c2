// `gpumemtrace check TRACE...`: the CI gate. Each trace (one process) is measured against
// the limits; exit 0 when all hold, 1 when one is exceeded, 2 for unusable input.
#include "commands.h"

#include "count_option.h"
#include "junit_writer.h"
#include "leak_gate.h"
#include "output_file.h"
#include "report_input.h"
#include "size_parse.h"
#include "suppressions.h"

#include <iostream>
#include <memory>
#include <optional>

namespace gmt::cli {

namespace {

struct CheckArgs {
    std::vector<std::string> traces;
    uint64_t max_leaked_bytes = 0;
    std::optional<uint64_t> max_leaks;
    std::optional<uint64_t> max_peak_bytes;
    bool fail_on_errors = true;
    bool allow_incomplete = false;
    std::string suppressions;
    std::string junit;
    size_t top = 5;
    size_t frames = 8;
    bool no_symbols = false;
};

std::string processName(const ProcessVerdict& v) {
    std::string name = "pid " + std::to_string(v.pid);
    if (!v.command.empty()) {
        name += " (" + v.command + ")";
    }
    return name;
}

void printVerdict(std::ostream& out, const ProcessVerdict& v) {
    out << (v.failed() ? "FAIL " : "ok   ") << processName(v) << "  " << v.trace_file << '\n';
    for (const std::string& note : v.notes) {
        out << "  note: " << note << '\n';
    }
    for (const CheckOutcome& c : v.checks) {
        out << "  " << (c.failed ? "FAIL " : "ok   ") << c.name << ": " << c.summary << '\n';
        if (c.failed) {
            for (const std::string& line : c.details) {
                out << "    " << line << '\n';
            }
        }
    }
}

void printSuppressions(std::ostream& out, const Suppressions& suppressions) {
    if (suppressions.empty()) {
        return;
    }
    std::vector<const Suppression*> used, unused;
    for (const Suppression& s : suppressions.entries()) {
        (s.uses ? used : unused).push_back(&s);
    }
    out << "suppressions: " << used.size() << " used, " << unused.size() << " unused\n";
    for (const Suppression* s : used) {
        out << "  used   " << s->text() << "  (" << s->origin << "): " << s->uses
            << (s->type == Suppression::Type::Leak
                    ? (s->uses == 1 ? " leak site, " : " leak sites, ") +
                          std::to_string(s->allocations) + " allocations, " + formatBytes(s->bytes)
                    : std::string(s->uses == 1 ? " error" : " errors"))
            << '\n';
    }
    for (const Suppression* s : unused) {
        out << "  unused " << s->text() << "  (" << s->origin << ")\n";
    }
}

JUnitSuite junitSuite(const ProcessVerdict& v) {
    JUnitSuite suite;
    suite.name = "gpumemtrace " + processName(v);
    suite.time_s = v.duration_s;
    suite.properties = {{"trace_file", v.trace_file}, {"pid", std::to_string(v.pid)}};
    for (const CheckOutcome& c : v.checks) {
        JUnitCase tc;
        tc.name = c.name;
        tc.classname = "gpumemtrace.pid" + std::to_string(v.pid);
        tc.failed = c.failed;
        std::string text;
        for (const std::string& note : v.notes) {
            text += "note: " + note + "\n";
        }
        for (const std::string& line : c.details) {
            text += line + "\n";
        }
        if (c.failed) {
            tc.failure_message = c.summary;
            tc.failure_type = "gpumemtrace." + c.name;
            tc.failure_text = c.summary + "\n" + text;
        } else {
            tc.system_out = c.summary + "\n" + text;
        }
        suite.cases.push_back(std::move(tc));
    }
    return suite;
}

int runCheck(const CheckArgs& args) {
    Suppressions suppressions;
    if (!args.suppressions.empty()) {
        suppressions = Suppressions::load(args.suppressions);
    }
    // Every trace is analysed before anything is printed: a bad file must fail the gate
    // with one clear line, not after half a verdict.
    std::vector<Json> reports;
    AnalyzeOptions ao;
    ao.symbols = !args.no_symbols;
    for (const std::string& trace : args.traces) {
        reports.push_back(analyzeTrace(trace, ao));
    }
    GateLimits limits;
    limits.max_leaked_bytes = args.max_leaked_bytes;
    limits.max_leaks = args.max_leaks;
    limits.max_peak_bytes = args.max_peak_bytes;
    limits.fail_on_errors = args.fail_on_errors;
    limits.allow_incomplete = args.allow_incomplete;
    GateDetail detail;
    detail.top = args.top;
    detail.frames = args.frames;

    std::vector<ProcessVerdict> verdicts;
    size_t failed_processes = 0, failed_checks = 0, checks = 0;
    for (const Json& report : reports) {
        verdicts.push_back(evaluateProcess(report, limits, suppressions, detail));
        const ProcessVerdict& v = verdicts.back();
        failed_processes += v.failed() ? 1 : 0;
        for (const CheckOutcome& c : v.checks) {
            ++checks;
            failed_checks += c.failed ? 1 : 0;
        }
        printVerdict(std::cout, v);
    }
    printSuppressions(std::cout, suppressions);
    if (failed_processes == 0) {
        std::cout << "gpumemtrace check: passed (" << checks << " checks in " << verdicts.size()
                  << (verdicts.size() == 1 ? " process)\n" : " processes)\n");
    } else {
        std::cout << "gpumemtrace check: FAILED (" << failed_checks << " of " << checks
                  << " checks in " << failed_processes << " of " << verdicts.size()
                  << (verdicts.size() == 1 ? " process)\n" : " processes)\n");
    }
    finishStdout();

    if (!args.junit.empty()) {
        std::vector<JUnitSuite> suites;
        for (const ProcessVerdict& v : verdicts) {
            suites.push_back(junitSuite(v));
        }
        writeOutputFile(args.junit, renderJUnit(suites, "gpumemtrace check"));
    }
    return failed_processes == 0 ? kExitOk : kExitNotOk;
}

} // namespace

void addCheckCommand(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "check", "CI gate: fail (exit 1) when traces leak, peak too high or misuse the API");
    auto args = std::make_shared<CheckArgs>();
    cmd->add_option("traces", args->traces, "Trace files, one per process")->required();
    cmd->add_option("--max-leaked-bytes", args->max_leaked_bytes,
                    "Leaked bytes allowed per process (K, M, G, KiB, MiB, GiB)")
        ->transform(sizeTransform())
        ->default_str("0");
    cmd->add_option("--max-leaks", args->max_leaks,
                    "Leaked allocations allowed per process (default: no count limit)");
    cmd->add_option("--max-peak-bytes", args->max_peak_bytes,
                    "Peak device memory allowed per process (default: no limit)")
        ->transform(sizeTransform());
    cmd->add_flag("--fail-on-errors,!--no-fail-on-errors", args->fail_on_errors,
                  "Fail on double, invalid or mismatched frees (default: on)");
    cmd->add_flag("--allow-incomplete", args->allow_incomplete,
                  "Do not fail on a trace that ends early (killed process, damaged file)");
    cmd->add_option("--suppressions", args->suppressions,
                    "File of leak:PATTERN / error:PATTERN lines to ignore");
    cmd->add_option("--junit", args->junit, "Also write the verdict as JUnit XML to FILE");
    cmd->add_option("--top", args->top, "Leak sites and errors shown with stacks")
        ->check(countRange(0, kMaxTop))
        ->default_str("5");
    cmd->add_option("--frames", args->frames, "Frames shown per stack")
        ->check(countRange(0, kMaxShownFrames))
        ->default_str("8");
    cmd->add_flag("--no-symbols", args->no_symbols, "Module + offset frames only (faster)");
    cmd->footer("Limits apply to each process (trace) separately; suppressed leaks do not "
                "count.\n"
                "Exit status: 0 all limits hold, 1 a limit is exceeded, 2 bad input or usage.\n\n"
                "Example:\n"
                "  gpumemtrace record -o 'ci.%p.gmtrace' -- ctest\n"
                "  gpumemtrace check ci.*.gmtrace --max-leaked-bytes 1M "
                "--suppressions gpumemtrace.supp --junit gpumemtrace.xml");
    cmd->callback([args, &exit_code] {
        try {
            exit_code = runCheck(*args);
        } catch (const InputError& e) {
            std::cerr << "gpumemtrace check: " << e.what() << '\n';
            exit_code = kExitBadInput;
        } catch (const SuppressionError& e) {
            std::cerr << "gpumemtrace check: " << e.what() << '\n';
            exit_code = kExitBadInput;
        }
    });
}

} // namespace gmt::cli
