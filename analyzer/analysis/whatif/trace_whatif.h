// The what-if replays of one trace: its requests read (request_stream.h), the settings
// chosen (those named, else the run's own and defaultReplaySettings'), each device replayed
// (replay.h). What `gpumemtrace whatif` prints and the report's `what_if` carries, so that
// a figure is the same in both (docs/whatif.md).
#pragma once

#include "analysis/whatif/replay.h"
#include "model/whatif.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gmt::analyzer {

struct ProcessData; // analysis/analysis.h

struct WhatIfOptions {
    // A trace of more requests (all devices together) is not replayed: its one run has no
    // settings and a note saying why (memory: 32 bytes a request; time: a replay per
    // setting, linear in them).
    uint64_t max_requests = UINT64_MAX;
    std::vector<ReplaySetting> settings; // empty: the run's own and the default list
    std::vector<NamedCapacity> capacities;
    // The least capacity is searched (about a dozen replays per setting) only for devices
    // of at most this many requests; beyond, min_capacity_bytes is null and a note says so.
    uint64_t min_capacity_requests = UINT64_MAX;
};

// What a report replays (ReportOptions::what_if): traces of at most 4 M requests (128 MiB
// held, seven linear replays), and the least capacity (about 13 replays per setting) only
// for devices of at most 200 000.
inline constexpr uint64_t kReportMaxRequests = 4000000;
inline constexpr uint64_t kReportMinCapacityRequests = 200000;

// One run per device with requests; none when the trace has neither PyTorch block events
// nor cudaMalloc calls; one without settings, and a note, beyond max_requests. Throws
// TraceError for a file that is not a trace.
std::vector<WhatIfRun> whatIfOfTrace(const std::string& path, const WhatIfOptions& options);

// whatIfOfTrace of a process the analysis has read from its trace: one whose allocation
// requests alone exceed max_requests is not read again (what the report's replay would
// otherwise cost: the first max_requests requests read, held and dropped).
std::vector<WhatIfRun> whatIfOfAnalyzedTrace(const ProcessData& process,
                                             const WhatIfOptions& options);

} // namespace gmt::analyzer
