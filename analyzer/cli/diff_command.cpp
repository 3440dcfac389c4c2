// `gpumemtrace diff BASE NEW`: a memory-regression gate between two runs. Inputs are
// traces or JSON reports; exit 1 when a growth limit is exceeded, 2 for bad input.
#include "commands.h"

#include "output_file.h"
#include "report_diff.h"
#include "report_input.h"
#include "size_parse.h"
#include "terminal_style.h"
#include "text_safety.h"

#include <iostream>
#include <memory>
#include <optional>
#include <unistd.h>

namespace gmt::cli {

namespace {

constexpr size_t kDiffSites = 1000;

struct DiffArgs {
    std::string base;
    std::string now;
    std::optional<double> max_peak_growth;
    std::optional<uint64_t> max_leak_growth;
    bool no_symbols = false;
};

int runDiff(const DiffArgs& args) {
    AnalyzeOptions ao;
    ao.symbols = !args.no_symbols;
    // Sites are compared one by one: the largest kDiffSites of each run (a JSON report
    // holds what it was written with); beyond them only totals.
    ao.top = kDiffSites;
    const analyzer::Report base = loadTraceOrReport(args.base, ao);
    const analyzer::Report now = loadTraceOrReport(args.now, ao);
    DiffLimits limits;
    limits.max_peak_growth_pct = args.max_peak_growth;
    limits.max_leak_growth = args.max_leak_growth;
    ReportDiff diff = diffReports(base, now, limits);
    std::cout << renderDiff(diff, args.base, args.now, terminalStyle(STDOUT_FILENO));
    if (diff.violations.empty()) {
        std::cout << "gpumemtrace diff: within limits\n";
        finishStdout();
        return kExitOk;
    }
    for (const std::string& v : diff.violations) {
        std::cout << "gpumemtrace diff: FAIL " << analyzer::printable(v) << '\n';
    }
    finishStdout();
    return kExitNotOk;
}

} // namespace

void addDiffCommand(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("diff", "Compare two runs (traces or JSON reports): peak, "
                                           "leaks by site, failures");
    auto args = std::make_shared<DiffArgs>();
    cmd->add_option("base", args->base, "Baseline trace or JSON report")->required();
    cmd->add_option("new", args->now, "New trace or JSON report")->required();
    cmd->add_option("--max-peak-growth", args->max_peak_growth,
                    "Fail when any peak (total, per device, per kind) grows by more than PCT "
                    "percent")
        ->transform(percentTransform());
    cmd->add_option("--max-leak-growth", args->max_leak_growth,
                    "Fail when leaked bytes grow by more than BYTES (K, M, G, KiB, MiB, GiB)")
        ->transform(sizeTransform());
    cmd->add_flag("--no-symbols", args->no_symbols,
                  "Module + offset frames only (sites then match by offset)");
    cmd->footer("Without limits diff only reports. Leak sites are compared one by one for the "
                "1000\nlargest of each run; a JSON report lists only its top sites: write it "
                "with\n`gpumemtrace report --top 1000` to compare as many.\n"
                "Exit status: 0 within limits, 1 a limit is exceeded, 2 bad input or usage.\n\n"
                "Example:\n"
                "  gpumemtrace report main.gmtrace --format json -o base.json\n"
                "  gpumemtrace diff base.json pr.gmtrace --max-peak-growth 5 "
                "--max-leak-growth 0");
    cmd->callback([args, &exit_code] {
        try {
            exit_code = runDiff(*args);
        } catch (const InputError& e) {
            std::cerr << "gpumemtrace diff: " << analyzer::printable(e.what()) << '\n';
            exit_code = kExitBadInput;
        }
    });
}

} // namespace gmt::cli
