// `gpumemtrace whatif TRACE... [--setting S]... [--capacity C]...`: replays a recorded run's
// allocation requests under other caching-allocator settings and device capacities
// (analysis/whatif/replay.h; docs/whatif.md). Exit 0, or 2 for bad input.
#include "cli/commands.h"

#include "analysis/whatif/trace_whatif.h"
#include "base/output_file.h"
#include "base/text_safety.h"
#include "base/version.h"
#include "cli/gpu_capacity.h"
#include "cli/path_option.h"
#include "cli/report_input.h"
#include "read/trace_error.h"
#include "report/whatif_json.h"
#include "views/whatif_text.h"

#include <iostream>
#include <memory>

namespace gmt::cli {

namespace {

struct WhatIfArgs {
    std::vector<std::string> traces;
    std::vector<std::string> settings;
    std::vector<std::string> capacities;
    std::string format = "text";
    std::string output;
};

int runWhatIf(const WhatIfArgs& args) {
    using namespace gmt::analyzer;
    std::vector<ReplaySetting> named;
    for (const std::string& text : args.settings) {
        std::string error;
        auto s = parseReplaySetting(text, error);
        if (!s) {
            std::cerr << "gpumemtrace whatif: --setting " << printable(error) << '\n';
            return kExitBadInput;
        }
        named.push_back(*s);
    }
    std::vector<NamedCapacity> capacities;
    for (const std::string& text : args.capacities) {
        const auto bytes = parseCapacity(text);
        if (!bytes) {
            std::cerr << "gpumemtrace whatif: --capacity " << printable(text)
                      << ": not a size (24GiB, 80G, 40000MB) nor a GPU (" << namedGpus() << ")\n";
            return kExitBadInput;
        }
        capacities.push_back({text, *bytes});
    }
    WhatIfOptions options;
    options.settings = named;
    options.capacities = capacities;
    WhatIfReport report;
    report.generator = generatorName();
    for (const std::string& path : expandTraceInputs(args.traces)) {
        requireReadableFile(path);
        std::vector<WhatIfRun> runs = whatIfOfTrace(path, options);
        if (runs.empty()) {
            std::cerr << "gpumemtrace whatif: " << printable(path)
                      << ": no allocations to replay (neither PyTorch block events nor "
                         "cudaMalloc calls); `gpumemtrace report` shows what the trace holds\n";
            return kExitBadInput;
        }
        for (WhatIfRun& run : runs) {
            report.runs.push_back(std::move(run));
        }
    }
    const std::string text =
        args.format == "json" ? jsonText(toJson(report), 2) + "\n" : renderWhatIf(report);
    writeOutputFile(args.output.empty() ? "-" : args.output, text);
    return kExitOk;
}

} // namespace

void addWhatIfCommand(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "whatif", "Replay a run's allocations under other caching-allocator settings and "
                  "GPU capacities: peak reserved, fragmentation, cudaMalloc calls, OOMs");
    auto args = std::make_shared<WhatIfArgs>();
    cmd->add_option("traces", args->traces, "Trace files (or directories of them)")
        ->required()
        ->type_name("TRACE");
    cmd->add_option("--setting", args->settings,
                    "A PYTORCH_CUDA_ALLOC_CONF value to replay under, e.g. "
                    "expandable_segments:True or max_split_size_mb:128,"
                    "roundup_power2_divisions:4, or default; repeat for several (default: the "
                    "run's own, default, expandable_segments, max_split_size_mb:128, "
                    "roundup_power2_divisions:4, garbage_collection_threshold:0.8 with a "
                    "capacity, backend:cudaMallocAsync)")
        ->type_name("S");
    cmd->add_option("--capacity", args->capacities,
                    "A device capacity to check each setting against: a size (24GiB, 80G) or "
                    "a GPU (" +
                        namedGpus() + "); repeat for several")
        ->type_name("C");
    cmd->add_option("--format", args->format, "text (default) or json (docs/whatif.schema.json)")
        ->check(CLI::IsMember({"text", "json"}));
    cmd->add_option("-o,--output", args->output, "Write to FILE instead of standard output")
        ->type_name("FILE")
        ->check(nonEmptyPath());
    cmd->footer("What each model does and when a figure is exact: docs/whatif.md.\n\n"
                "Example:\n"
                "  gpumemtrace whatif train.1234.gmtrace --capacity A100-40GB --capacity 24GiB\n"
                "  gpumemtrace whatif train.1234.gmtrace --setting expandable_segments:True "
                "--format json -o whatif.json");
    cmd->callback([args, &exit_code] {
        try {
            exit_code = runWhatIf(*args);
        } catch (const analyzer::TraceError& e) {
            std::cerr << "gpumemtrace: " << analyzer::printable(e.what()) << '\n';
            exit_code = kExitBadInput;
        } catch (const InputError& e) {
            std::cerr << "gpumemtrace whatif: " << analyzer::printable(e.what()) << '\n';
            exit_code = kExitBadInput;
        }
    });
}

} // namespace gmt::cli
