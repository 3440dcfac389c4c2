#include "analysis/whatif/trace_whatif.h"

#include "analysis/analysis.h"

namespace gmt::analyzer {

namespace {

// A trace of more requests than the options replay: one run without settings; `requests`
// is a lower bound, as many as were counted before giving up (the HTML report says "and
// more").
WhatIfRun notReplayed(const std::string& path, uint64_t pid, uint64_t requests,
                      RequestSource source, const WhatIfOptions& options) {
    WhatIfRun run;
    run.trace = path;
    run.pid = pid;
    run.requests = requests;
    run.source = source == RequestSource::PyTorchBlocks ? "pytorch_blocks" : "cuda_calls";
    run.notes.push_back("not replayed: more than " + std::to_string(options.max_requests) +
                        " allocation requests, the most replayed here; "
                        "`gpumemtrace whatif` replays any number");
    return run;
}

} // namespace

std::vector<WhatIfRun> whatIfOfAnalyzedTrace(const ProcessData& process,
                                             const WhatIfOptions& options) {
    if (process.allocation_requests > options.max_requests) {
        // readRequests' choice of source: block events, where the trace has any.
        return {notReplayed(
            process.trace_file, process.header ? process.header->pid : 0,
            process.allocation_requests,
            process.blocks ? RequestSource::PyTorchBlocks : RequestSource::CudaCalls, options)};
    }
    return whatIfOfTrace(process.trace_file, options);
}

std::vector<WhatIfRun> whatIfOfTrace(const std::string& path, const WhatIfOptions& options) {
    const TraceRequests trace = readRequests(path, options.max_requests);
    if (trace.too_many_requests) {
        return {notReplayed(path, trace.pid, trace.requests_held, trace.source_held, options)};
    }
    ReplaySetting recorded = recordedSetting(trace.config, trace.backend);
    if (!trace.attached && trace.config.empty() && recorded.setting.empty()) {
        recorded.label = "default"; // no caching allocator ran: nothing was recorded
    }
    const std::vector<ReplaySetting> settings =
        options.settings.empty() ? defaultReplaySettings(recorded, !options.capacities.empty())
                                 : options.settings;
    std::vector<WhatIfRun> runs;
    for (const RequestStream& device : trace.devices) {
        runs.push_back(
            replayRun(trace, device, settings, options.capacities, options.min_capacity_requests));
    }
    return runs;
}

} // namespace gmt::analyzer
