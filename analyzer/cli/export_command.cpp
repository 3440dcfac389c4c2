// `gpumemtrace export --format FORMAT [-o OUT] TRACE...`: traces into the formats of
// familiar viewers (analyzer/export/exporter.h; docs/export.md). Several traces are one
// process each.
#include "cli/commands.h"
#include "cli/framework_options.h"
#include "cli/path_option.h"

#include "base/text_safety.h"
#include "export/exporter.h"
#include "read/trace_error.h"

#include <iostream>
#include <map>
#include <memory>
#include <unistd.h>

namespace gmt::cli {

namespace {

struct ExportArgs {
    std::vector<std::string> traces;
    std::string format;
    std::string output;
    std::string metric;
    bool no_symbols = false;
    std::vector<std::string> user_code;
    bool full_stacks = false;
};

int runExport(const ExportArgs& args) {
    using namespace gmt::analyzer;
    static const std::map<std::string, ExportFormat> kFormats = {
        {"memory-viz", ExportFormat::MemoryViz},
        {"perfetto", ExportFormat::Perfetto},
        {"folded", ExportFormat::Folded},
        {"ndjson", ExportFormat::Ndjson}};
    static const std::map<std::string, FoldedMetric> kMetrics = {
        {"leaked", FoldedMetric::Leaked},
        {"peak", FoldedMetric::Peak},
        {"allocated", FoldedMetric::Allocated},
        {"allocations", FoldedMetric::Allocations}};
    ExportOptions options;
    options.format = kFormats.at(args.format);
    options.output = args.output;
    options.symbols = !args.no_symbols;
    options.user_code.roots = args.user_code;
    options.full_stacks = args.full_stacks;
    if (!args.metric.empty()) {
        if (options.format != ExportFormat::Folded) {
            std::cerr << "gpumemtrace export: --metric applies to --format folded only\n";
            return kExitBadInput;
        }
        options.metric = kMetrics.at(args.metric);
    }
    const bool to_stdout = args.output.empty() || args.output == "-";
    if (options.format == ExportFormat::MemoryViz && to_stdout && args.traces.size() == 1 &&
        isatty(STDOUT_FILENO)) {
        std::cerr << "gpumemtrace export: a memory-viz snapshot is binary; write it to a file "
                     "with -o FILE.pickle\n";
        return kExitBadInput;
    }
    exportTraces(args.traces, options);
    return kExitOk;
}

} // namespace

void addExportCommand(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand(
        "export",
        "Write traces for other viewers: PyTorch memory_viz, Perfetto, flame graphs, SQL");
    auto args = std::make_shared<ExportArgs>();
    cmd->add_option("traces", args->traces, "Trace files, one per process")
        ->required()
        ->type_name("TRACE");
    cmd->add_option("--format", args->format,
                    "memory-viz (a PyTorch memory snapshot), perfetto (Chrome trace-event "
                    "JSON), folded (flame graph stacks), ndjson (tables for SQL engines)")
        ->required()
        ->check(CLI::IsMember({"memory-viz", "perfetto", "folded", "ndjson"}));
    cmd->add_option("-o,--output", args->output,
                    "Where to write: a file (memory-viz of one trace, perfetto, folded; default "
                    "standard output) or a directory (ndjson; memory-viz of several traces)")
        ->type_name("OUT")
        ->check(nonEmptyPath());
    cmd->add_option("--metric", args->metric,
                    "folded: leaked or peak bytes, allocated bytes, allocations (default leaked)")
        ->check(CLI::IsMember({"leaked", "peak", "allocated", "allocations"}));
    cmd->add_flag("--no-symbols", args->no_symbols, "Module + offset frames only");
    addUserCodeOption(cmd, args->user_code);
    cmd->add_flag("--full-stacks", args->full_stacks,
                  "Keep every frame, also the recorder's, the CUDA libraries' and libc start-up");
    cmd->footer("Formats and how to open them in each viewer: docs/export.md.\n\n"
                "Example:\n"
                "  gpumemtrace export --format memory-viz -o snapshot.pickle app.1234.gmtrace\n"
                "  gpumemtrace export --format perfetto -o trace.json app.*.gmtrace\n"
                "  gpumemtrace export --format folded --metric leaked app.1234.gmtrace "
                "| flamegraph.pl > leaks.svg\n"
                "  gpumemtrace export --format ndjson -o tables/ app.*.gmtrace");
    cmd->callback([args, &exit_code] {
        try {
            exit_code = runExport(*args);
        } catch (const analyzer::TraceError& e) {
            std::cerr << "gpumemtrace: " << analyzer::printable(e.what()) << '\n';
            exit_code = kExitBadInput;
        }
        // An OutputError (an output that cannot be made or written) reaches main: one
        // line, exit 2.
    });
}

} // namespace gmt::cli
