// `gpumemtrace check TRACE...`: the CI gate. Each trace (one process) or saved JSON report
// is measured against the limits; exit 0 when all hold, 1 when one is exceeded, 2 for
// unusable input.
#include "cli/commands.h"

#include "base/output_file.h"
#include "base/size_parse.h"
#include "base/text_safety.h"
#include "check/check_json.h"
#include "check/github_annotations.h"
#include "check/junit_writer.h"
#include "check/leak_gate.h"
#include "check/sarif_writer.h"
#include "check/source_paths.h"
#include "check/suppressions.h"
#include "cli/check_gate.h"
#include "cli/count_option.h"
#include "cli/path_option.h"
#include "cli/report_input.h"
#include "cli/terminal_style.h"
#include "report/rank_table.h"
#include "views/text_report.h"

#include <algorithm>
#include <deque>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <unistd.h>

namespace gmt::cli {

namespace {

struct CheckArgs {
    std::vector<std::string> traces;
    CheckOptions options;
};

std::string processName(const ProcessVerdict& v) {
    std::string name = "pid " + std::to_string(v.pid);
    if (!v.command.empty()) {
        name += " (" + v.command + ")";
    }
    return name;
}

using analyzer::Tone;

Tone verdictTone(bool failed) {
    return failed ? Tone::Bad : Tone::Good;
}

void printVerdict(analyzer::StyledText& out, const ProcessVerdict& v) {
    out.line({{v.failed() ? "FAIL " : "ok   ", verdictTone(v.failed())},
              {processName(v), Tone::Strong},
              {"  " + v.trace_file, Tone::Plain}});
    for (const std::string& note : v.notes) {
        out.line({{"  note: ", Tone::Warn}, {note, Tone::Plain}});
    }
    for (const CheckOutcome& c : v.checks) {
        out.line({{"  " + std::string(c.failed ? "FAIL " : "ok   "), verdictTone(c.failed)},
                  {c.name + ": " + c.summary, Tone::Plain}});
        if (c.failed) {
            for (const DetailLine& line : c.details) {
                // A frame's function gives way to its file:line; other lines wrap.
                out.line({{"    ", Tone::Plain},
                          {line.what, Tone::Plain, !line.where.empty()},
                          {line.where, Tone::Dim}});
            }
        }
    }
}

void printUsedSuppressions(analyzer::StyledText& out, const std::vector<const Suppression*>& used) {
    for (const Suppression* s : used) {
        out.line("  used   " + s->text() + "  (" + s->origin + "): " + std::to_string(s->uses) +
                 (s->type == Suppression::Type::Leak
                      ? (s->uses == 1 ? " leak site, " : " leak sites, ") +
                            std::to_string(s->allocations) + " allocations, " +
                            formatBytes(s->bytes)
                      : std::string(s->uses == 1 ? " error" : " errors")));
    }
}

// The user's suppressions, used or not (stale lines should go), then the built-in ones that
// were used (the others are no news).
void printSuppressions(analyzer::StyledText& out, const Suppressions& suppressions) {
    std::vector<const Suppression*> used, unused, builtin_used;
    size_t builtin = 0;
    for (const Suppression& s : suppressions.entries()) {
        if (s.origin == "built-in") {
            ++builtin;
            if (s.uses) {
                builtin_used.push_back(&s);
            }
            continue;
        }
        (s.uses ? used : unused).push_back(&s);
    }
    if (!used.empty() || !unused.empty()) {
        out.line("suppressions: " + std::to_string(used.size()) + " used, " +
                 std::to_string(unused.size()) + " unused");
    }
    printUsedSuppressions(out, used);
    for (const Suppression* s : unused) {
        out.line({{"  unused " + s->text() + "  (" + s->origin + ")", Tone::Warn}});
    }
    if (!builtin_used.empty()) {
        out.line("built-in suppressions: " + std::to_string(builtin_used.size()) + " of " +
                 std::to_string(builtin) + " used (--print-builtin-suppressions says why)");
        printUsedSuppressions(out, builtin_used);
    }
}

// Named after the command and rank, never the pid, so a CI system can follow a test case
// from run to run; processes of the same name are numbered in the order of the traces.
JUnitSuite junitSuite(const ProcessVerdict& v, const std::string& name) {
    JUnitSuite suite;
    suite.name = "gpumemtrace " + name;
    suite.time_s = v.duration_s;
    suite.properties = {{"trace_file", v.trace_file}, {"pid", std::to_string(v.pid)}};
    if (v.rank) {
        suite.properties.emplace_back("rank", std::to_string(*v.rank));
    }
    if (!v.host.empty()) {
        suite.properties.emplace_back("host", v.host);
    }
    std::string classname = "gpumemtrace." + name;
    // JUnit readers split class names at dots into packages: keep the name one part.
    std::replace(classname.begin() + 12, classname.end(), '.', '_');
    for (const CheckOutcome& c : v.checks) {
        JUnitCase tc;
        tc.name = c.name;
        tc.classname = classname;
        tc.failed = c.failed;
        std::string text;
        for (const std::string& note : v.notes) {
            text += "note: " + note + "\n";
        }
        for (const DetailLine& line : c.details) {
            text += line.str() + "\n";
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

// A failed peak increase: the process's trace read again, up to the moment the phase's
// increase was reached, so that the verdict lists what held it (addPeakIncreaseHolders).
// Only then, and only for a trace (a saved report has no events to read again): a test that
// passes pays nothing for it.
void addHolders(ProcessVerdict& v, const analyzer::Report& report, const std::string& input,
                const AnalyzeOptions& options, const std::string& phase, const GateDetail& detail,
                std::deque<analyzer::Report>& holders) {
    const bool failed = std::any_of(v.checks.begin(), v.checks.end(), [](const CheckOutcome& c) {
        return c.name == "peak_increase" && c.failed;
    });
    const std::optional<uint64_t> when = peakIncreaseTime(report, phase);
    if (!failed || !when || !isTrace(input)) {
        return;
    }
    AnalyzeOptions then = options;
    then.phase = phase;
    then.until_ns = *when;
    holders.push_back(analyzeTrace(input, then));
    addPeakIncreaseHolders(v, holders.back(), detail);
}

} // namespace

int runCheckGate(const std::vector<std::string>& traces, const CheckOptions& args,
                 std::ostream& stream, const analyzer::TextStyle& style) {
    Suppressions suppressions = suppressionsOf(args.frameworks);
    // Every trace is analysed before anything is printed: a bad file must fail the gate
    // with one clear line, not after half a verdict. Only the sites shown are kept with
    // their stacks; leak suppressions see every site as the report is made.
    std::vector<analyzer::Report> reports;
    AnalyzeOptions ao;
    ao.symbols = !args.no_symbols;
    ao.top = args.top;
    ao.phase = args.phase;
    ao.iteration = args.iteration;
    ao.caching_allocators = cachingAllocatorTable(args.frameworks);
    ao.leak_filter = leakFilterOf(suppressions);
    ao.user_code.roots = args.frameworks.user_code;
    if (!args.source_root.empty()) {
        ao.user_code.extra_roots.push_back(args.source_root);
    }
    const std::vector<std::string> inputs = expandTraceInputs(traces);
    reports = loadEach(inputs, ao, args.jobs);
    GateLimits limits;
    limits.max_leaked_bytes = args.max_leaked_bytes;
    limits.max_leaks = args.max_leaks;
    limits.max_peak_bytes = args.max_peak_bytes;
    limits.max_peak_increase = args.max_peak_increase;
    limits.max_growth = args.max_growth;
    limits.phase = args.phase;
    limits.fail_on_errors = args.fail_on_errors;
    limits.allow_incomplete = args.allow_incomplete;
    GateDetail detail;
    detail.top = args.top;
    detail.stacks.max_frames = args.frames;
    detail.stacks.full = args.full_stacks;
    detail.stacks.python_only = args.python_only;

    analyzer::StyledText out(style);
    // The reports of what held a failed peak increase (addPeakIncreaseHolders): the
    // verdicts' findings point into them. A deque: its elements never move.
    std::deque<analyzer::Report> holders;
    std::vector<ProcessVerdict> verdicts;
    size_t failed_processes = 0, failed_checks = 0, checks = 0;
    for (size_t i = 0; i < reports.size(); ++i) {
        const analyzer::Report& report = reports[i];
        verdicts.push_back(evaluateProcess(report, limits, suppressions, detail));
        if (limits.phase && limits.max_peak_increase) {
            addHolders(verdicts.back(), report, inputs[i], ao, *limits.phase, detail, holders);
        }
        const ProcessVerdict& v = verdicts.back();
        failed_processes += v.failed() ? 1 : 0;
        for (const CheckOutcome& c : v.checks) {
            ++checks;
            failed_checks += c.failed ? 1 : 0;
        }
        printVerdict(out, v);
    }
    if (args.format == "text" || args.format == "github") {
        printSuppressions(out, suppressions);
        std::vector<const analyzer::Report*> all;
        for (const analyzer::Report& r : reports) {
            all.push_back(&r);
        }
        analyzer::writeRankTable(out, analyzer::rankRows(all));
    }
    const std::string processes =
        std::to_string(verdicts.size()) + (verdicts.size() == 1 ? " process)" : " processes)");
    if (failed_processes == 0) {
        out.line({{"gpumemtrace check: ", Tone::Plain},
                  {"passed", Tone::Good},
                  {" (" + std::to_string(checks) + " checks in " + processes, Tone::Plain}});
    } else {
        out.line({{"gpumemtrace check: ", Tone::Plain},
                  {"FAILED", Tone::Bad},
                  {" (" + std::to_string(failed_checks) + " of " + std::to_string(checks) +
                       " checks in " + std::to_string(failed_processes) + " of " + processes,
                   Tone::Plain}});
    }
    const SourceRoot root(args.source_root);
    if (args.format == "json") {
        stream << analyzer::jsonText(checkJson(verdicts, suppressions, root), 2) << '\n';
    } else {
        stream << out.str();
        if (args.format == "github") {
            stream << githubAnnotations(verdicts, root);
        }
    }
    analyzer::finishStream(stream, "standard output");

    if (!args.junit.empty()) {
        std::vector<JUnitSuite> suites;
        std::map<std::string, int> seen;
        for (const ProcessVerdict& v : verdicts) {
            std::string name = stableName(v);
            if (const int n = ++seen[name]; n > 1) {
                name += " #" + std::to_string(n);
            }
            suites.push_back(junitSuite(v, name));
        }
        analyzer::OutputFile junit(args.junit);
        writeJUnit(suites, "gpumemtrace check",
                   [&junit](std::string_view piece) { junit.write(piece); });
        junit.close();
    }
    if (!args.sarif.empty()) {
        analyzer::OutputFile sarif(args.sarif);
        writeSarif(verdicts, root, [&sarif](std::string_view piece) { sarif.write(piece); });
        sarif.close();
    }
    return failed_processes == 0 ? kExitOk : kExitNotOk;
}

std::vector<CLI::Option*> addCheckOptions(CLI::App* cmd, CheckOptions& options) {
    CheckOptions* o = &options;
    CLI::Option* phase =
        cmd->add_option("--phase", o->phase,
                        "Apply --max-leaked-bytes, --max-leaks, --max-peak-bytes and "
                        "--max-growth to phase NAME (gpumemtrace_mark_phase, "
                        "gpumemtrace_push_phase, NVTX ranges) and the phases nested in it")
            ->type_name("NAME");
    return {
        phase,
        cmd->add_option("--max-leaked-bytes", o->max_leaked_bytes,
                        "Leaked bytes allowed per process (K, M, G, KiB, MiB, GiB)")
            ->transform(sizeTransform())
            ->default_str("0"),
        cmd->add_option("--max-leaks", o->max_leaks,
                        "Leaked allocations allowed per process (default: no count limit)"),
        cmd->add_option("--max-peak-bytes", o->max_peak_bytes,
                        "Peak device memory allowed per process (default: no limit)")
            ->transform(sizeTransform()),
        cmd->add_option("--max-peak-increase", o->max_peak_increase,
                        "With --phase: how much the device memory may rise above its level "
                        "when the phase began")
            ->transform(sizeTransform())
            ->needs(phase),
        cmd->add_option("--max-growth", o->max_growth,
                        "Bytes per iteration that growing allocation sites may add, summed "
                        "(default: growth is noted, not failed)")
            ->transform(sizeTransform())
            ->type_name("BYTES_PER_ITERATION"),
        cmd->add_option("--iteration", o->iteration,
                        "The phase NAME whose marks or pushes begin iterations (default: the "
                        "outermost phase marked most often, else the allocation pattern)")
            ->type_name("NAME"),
        // Two flags rather than CLI11's `!--no-…` form, whose help shows "{false}".
        cmd->add_flag("--fail-on-errors", o->fail_on_errors,
                      "Fail on double, invalid or mismatched frees (the default)"),
        cmd->add_flag_callback(
            "--no-fail-on-errors", [o] { o->fail_on_errors = false; },
            "Report double, invalid or mismatched frees without failing"),
        cmd->add_flag("--allow-incomplete", o->allow_incomplete,
                      "Do not fail on a trace that ends early (killed process, damaged file) or "
                      "misses events (drops, a gap): check what it has"),
        cmd->add_option("--junit", o->junit, "Also write the verdict as JUnit XML to FILE")
            ->type_name("FILE")
            ->check(nonEmptyPath()),
        cmd->add_option("--sarif", o->sarif,
                        "Also write the findings as SARIF 2.1.0 to FILE (code scanning)")
            ->type_name("FILE")
            ->check(nonEmptyPath()),
        cmd->add_option("--format", o->format,
                        "text, json (docs/check.schema.json) or github (text, then GitHub "
                        "Actions ::error annotations on the leaking source lines)")
            ->check(CLI::IsMember({"text", "json", "github"}))
            ->default_str("text"),
        cmd->add_option("--source-root", o->source_root,
                        "Paths in annotations and SARIF are relative to DIR (default: "
                        "$GITHUB_WORKSPACE, else the current directory)")
            ->type_name("DIR"),
        cmd->add_option("--jobs", o->jobs,
                        "Traces analysed at once, each on its own (default: one per core)")
            ->check(countRange(0, kMaxJobs))
            ->default_str("0"),
        cmd->add_option("--top", o->top, "Leak sites and errors shown with stacks")
            ->check(countRange(0, kMaxTop))
            ->default_str("5"),
        cmd->add_option("--frames", o->frames, "Native frames shown per stack (Python frames: all)")
            ->check(countRange(0, kMaxShownFrames))
            ->default_str("8"),
        cmd->add_flag("--full-stacks", o->full_stacks,
                      "Show every frame, also the recorder's, the CUDA libraries' and headers' "
                      "and libc start-up"),
        cmd->add_flag("--python-only", o->python_only,
                      "Of the native frames show only the one that called CUDA (and the CUDA "
                      "function, when recorded); Python frames all"),
        cmd->add_flag("--no-symbols", o->no_symbols,
                      "Module + offset frames only (faster); caching allocators and "
                      "suppressions are then matched without function names, so what a "
                      "cache holds at exit can count as leaked"),
    };
}

void addCheckCommand(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "check", "CI gate: fail (exit 1) when traces leak, peak too high or misuse the API");
    auto args = std::make_shared<CheckArgs>();
    cmd->add_option("traces", args->traces,
                    "Trace files, one per process, directories of them (a job's ranks), or JSON "
                    "reports from `gpumemtrace report`")
        ->type_name("TRACE");
    addCheckOptions(cmd, args->options);
    addFrameworkOptions(cmd, args->options.frameworks, true);
    cmd->footer("Limits apply to each process (trace) separately; suppressed leaks do not "
                "count.\n"
                "What caching allocators (PyTorch, CuPy, XLA, RMM) still hold at exit is their "
                "cache, not a leak (--count-cached counts it); the one-time allocations of "
                "cuBLAS, cuDNN, cuFFT, NCCL and the CUDA runtime are suppressed by built-in "
                "lines (--print-builtin-suppressions).\n"
                "Exit status: 0 all limits hold, 1 a limit is exceeded, 2 bad input or usage.\n\n"
                "Example:\n"
                "  gpumemtrace record -o 'ci.%p.gmtrace' -- ctest\n"
                "  gpumemtrace check ci.*.gmtrace --max-leaked-bytes 1M "
                "--suppressions gpumemtrace.supp --junit gpumemtrace.xml\n"
                "  gpumemtrace check train.gmtrace --phase epoch --max-peak-bytes 40G\n"
                "  gpumemtrace check train.gmtrace --max-growth 0 --iteration step");
    cmd->callback([args, &exit_code] {
        try {
            if (printFrameworkTables(args->options.frameworks, std::cout)) {
                exit_code = kExitOk;
                return;
            }
            if (args->traces.empty()) {
                throw CLI::RequiredError("traces");
            }
            exit_code =
                runCheckGate(args->traces, args->options, std::cout, terminalStyle(STDOUT_FILENO));
        } catch (const InputError& e) {
            std::cerr << "gpumemtrace check: " << analyzer::printable(e.what()) << '\n';
            exit_code = kExitBadInput;
        } catch (const SuppressionError& e) {
            std::cerr << "gpumemtrace check: " << analyzer::printable(e.what()) << '\n';
            exit_code = kExitBadInput;
        }
    });
}

} // namespace gmt::cli
