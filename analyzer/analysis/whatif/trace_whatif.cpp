#include "analysis/whatif/trace_whatif.h"

namespace gmt::analyzer {

std::vector<WhatIfRun> whatIfOfTrace(const std::string& path, const WhatIfOptions& options) {
    const TraceRequests trace = readRequests(path, options.max_requests);
    if (trace.too_many_requests) {
        WhatIfRun run;
        run.trace = path;
        run.pid = trace.pid;
        run.requests = trace.requests_held;
        run.source =
            trace.source_held == RequestSource::PyTorchBlocks ? "pytorch_blocks" : "cuda_calls";
        run.notes.push_back("not replayed: more than " + std::to_string(options.max_requests) +
                            " allocation requests, the most replayed here; "
                            "`gpumemtrace whatif` replays any number");
        return {run};
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
