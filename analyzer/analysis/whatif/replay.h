// The what-if replay: one device's recorded requests (request_stream.h) driven through an
// allocator model (allocator_model.h, stream_ordered_pool.h) under each setting
// (replay_setting.h), without a limit and at each capacity asked about, with the least
// capacity each setting fits in, and for every prediction whether it is exact and why.
// O(requests · log blocks) per replay; the least capacity is a binary search between what
// the tensors need at once and the unlimited replay's peak, in 2 MiB steps.
#pragma once

#include "analysis/whatif/allocator_model.h"
#include "analysis/whatif/replay_setting.h"
#include "analysis/whatif/request_stream.h"
#include "model/whatif.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gmt::analyzer {

struct NamedCapacity {
    std::string name; // as given ("24GiB", "A100-40GB")
    uint64_t bytes = 0;
};

struct ReplayResult {
    ModelFigures figures;
    std::optional<ModelOom> oom;
};

// The model a setting runs: the caching allocator, or for backend:cudaMallocAsync the
// stream-ordered pool.
ModelPolicy policyOf(const ReplaySetting& setting);

// One replay of every request (up to an out of memory at `capacity`).
ReplayResult replayOnce(const RequestStream& requests, const ModelPolicy& policy,
                        std::optional<uint64_t> capacity);

// The least capacity, in 2 MiB steps, at which the requests replay without running out.
uint64_t minCapacity(const RequestStream& requests, const ModelPolicy& policy,
                     uint64_t unlimited_peak);

// Sets run.recorded.replay_matches: whether `own` (the run's settings) replayed without a
// limit gives back the recorded peak and segment counts (a note says how not).
void checkAgainstRecording(WhatIfRun& run, const RequestStream& requests, const ReplaySetting& own);

// Every setting's replay of one device of one trace; the run's own settings are checked
// against the recording whatever `settings` holds. The least capacity is searched for only
// when the device has at most `min_capacity_requests` requests (else null, and a note).
WhatIfRun replayRun(const TraceRequests& trace, const RequestStream& requests,
                    const std::vector<ReplaySetting>& settings,
                    const std::vector<NamedCapacity>& capacities,
                    uint64_t min_capacity_requests = UINT64_MAX);

} // namespace gmt::analyzer
