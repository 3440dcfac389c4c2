// `gpumemtrace diff BASE NEW`: a memory-regression gate between two runs. Inputs are
// traces or JSON reports; exit 1 when a growth limit is exceeded, 2 for bad input.
#include "cli/commands.h"

#include "base/output_file.h"
#include "base/size_parse.h"
#include "base/text_safety.h"
#include "cli/count_option.h"
#include "cli/framework_options.h"
#include "cli/report_input.h"
#include "cli/terminal_style.h"
#include "diff/diff_json.h"
#include "diff/report_diff.h"

#include <iostream>
#include <map>
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
    std::vector<std::string> user_code;
    std::string format = "text";
    unsigned jobs = 0;
};

// What matches a process of one job with the same process of another: its rank (a rank's
// command line may change between runs), else its command line; processes of the same key
// are numbered in the order of their traces. Pids never match: they change every run.
std::vector<std::string> matchKeys(const std::vector<analyzer::Report>& reports) {
    std::vector<std::string> keys;
    std::map<std::string, int> seen;
    for (const analyzer::Report& r : reports) {
        std::string key = r.processes.size() == 1
                              ? r.processes.front().command
                              : std::to_string(r.processes.size()) + " processes";
        if (r.processes.size() == 1 && r.processes.front().rank) {
            key = "rank " + std::to_string(*r.processes.front().rank);
        }
        if (const int n = ++seen[key]; n > 1) {
            key += " #" + std::to_string(n);
        }
        keys.push_back(key);
    }
    return keys;
}

// How a pair is named: the key, with the command for a rank.
std::string pairName(const std::string& key, const analyzer::Report& r) {
    const bool ranked = r.processes.size() == 1 && r.processes.front().rank;
    return ranked ? key + " (" + r.processes.front().command + ")" : key;
}

uint64_t pidOf(const analyzer::Report& r) {
    return r.processes.size() == 1 ? r.processes.front().pid : 0;
}

int runDiff(const DiffArgs& args) {
    AnalyzeOptions ao;
    ao.symbols = !args.no_symbols;
    ao.user_code.roots = args.user_code;
    // Sites are compared one by one: the largest kDiffSites of each run (a JSON report
    // holds what it was written with); beyond them only totals.
    ao.top = kDiffSites;
    DiffLimits limits;
    limits.max_peak_growth_pct = args.max_peak_growth;
    limits.max_leak_growth = args.max_leak_growth;
    const std::vector<std::string> base_inputs = expandTraceInputs({args.base});
    const std::vector<std::string> new_inputs = expandTraceInputs({args.now});
    std::vector<DiffPair> pairs;
    std::vector<std::string> only_in_base, only_in_new;
    if (base_inputs.size() == 1 && new_inputs.size() == 1) {
        const auto base = loadEach(base_inputs, ao, args.jobs);
        const auto now = loadEach(new_inputs, ao, args.jobs);
        pairs.push_back({"", pidOf(base[0]), pidOf(now[0]), diffReports(base[0], now[0], limits)});
    } else {
        // A job against a job: each process on its own, matched by rank (processes
        // without one: by command).
        const auto base = loadEach(base_inputs, ao, args.jobs);
        const auto now = loadEach(new_inputs, ao, args.jobs);
        const auto base_keys = matchKeys(base), new_keys = matchKeys(now);
        std::map<std::string, size_t> new_index;
        for (size_t i = 0; i < new_keys.size(); ++i) {
            new_index[new_keys[i]] = i;
        }
        for (size_t i = 0; i < base_keys.size(); ++i) {
            auto match = new_index.find(base_keys[i]);
            if (match == new_index.end()) {
                only_in_base.push_back(pairName(base_keys[i], base[i]));
                continue;
            }
            const analyzer::Report& n = now[match->second];
            pairs.push_back({pairName(base_keys[i], base[i]), pidOf(base[i]), pidOf(n),
                             diffReports(base[i], n, limits)});
            new_index.erase(match);
        }
        for (const auto& [key, index] : new_index) {
            only_in_new.push_back(pairName(key, now[index]));
        }
    }
    std::vector<std::string> violations;
    for (const DiffPair& p : pairs) {
        for (const std::string& v : p.diff.violations) {
            violations.push_back(p.name.empty() ? v : p.name + ": " + v);
        }
    }
    if (args.format == "json") {
        std::cout << analyzer::jsonText(
                         diffJson(args.base, args.now, pairs, only_in_base, only_in_new), 2)
                  << '\n';
        analyzer::finishStdout();
        return violations.empty() ? kExitOk : kExitNotOk;
    }
    for (const DiffPair& p : pairs) {
        if (!p.name.empty()) {
            std::cout << "\n== " << analyzer::printable(p.name) << " (pid " << p.base_pid << " -> "
                      << p.new_pid << ")\n";
        }
        std::cout << renderDiff(p.diff, args.base, args.now, terminalStyle(STDOUT_FILENO));
    }
    for (const std::string& name : only_in_base) {
        std::cout << "only in base: " << analyzer::printable(name) << '\n';
    }
    for (const std::string& name : only_in_new) {
        std::cout << "only in new: " << analyzer::printable(name) << '\n';
    }
    if (violations.empty()) {
        std::cout << "gpumemtrace diff: within limits\n";
        analyzer::finishStdout();
        return kExitOk;
    }
    for (const std::string& v : violations) {
        std::cout << "gpumemtrace diff: FAIL " << analyzer::printable(v) << '\n';
    }
    analyzer::finishStdout();
    return kExitNotOk;
}

} // namespace

void addDiffCommand(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("diff", "Compare two runs (traces or JSON reports): peak, "
                                           "leaks by site, failures");
    auto args = std::make_shared<DiffArgs>();
    cmd->add_option("base", args->base,
                    "Baseline trace, JSON report, or directory of a job's traces")
        ->required()
        ->type_name("TRACE");
    cmd->add_option("new", args->now, "New trace, JSON report, or directory of a job's traces")
        ->required()
        ->type_name("TRACE");
    cmd->add_option("--format", args->format, "text or json (docs/diff.schema.json)")
        ->check(CLI::IsMember({"text", "json"}))
        ->default_str("text");
    cmd->add_option("--jobs", args->jobs,
                    "Traces analysed at once, each on its own (default: one per core)")
        ->check(countRange(0, kMaxJobs))
        ->default_str("0");
    cmd->add_option("--max-peak-growth", args->max_peak_growth,
                    "Fail when any peak (total, per device, per kind) grows by more than PCT "
                    "percent")
        ->transform(percentTransform());
    cmd->add_option("--max-leak-growth", args->max_leak_growth,
                    "Fail when leaked bytes grow by more than BYTES (K, M, G, KiB, MiB, GiB)")
        ->transform(sizeTransform());
    addUserCodeOption(cmd, args->user_code);
    cmd->add_flag("--no-symbols", args->no_symbols,
                  "Module + offset frames only (sites then match by offset)");
    cmd->footer("Two directories (a job's traces, one per rank) are compared process by process, "
                "matched by\nrank (without a rank: by command); the limits apply to each pair.\n"
                "Without limits diff only reports. Leak sites are compared one by one for the "
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
