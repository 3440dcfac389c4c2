// What `gpumemtrace whatif` predicts (analysis/whatif/replay.h fills it; docs/whatif.md
// explains each figure and docs/whatif.schema.json is its JSON): for each recorded run and
// device, what the caching allocator would have reserved under other settings and whether
// the run would have fitted on devices of other capacities. Field lists (GMT_DESCRIBE) are
// what the JSON writer walks.
#pragma once

#include "model/describe.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gmt::analyzer {

inline constexpr int kWhatIfSchemaVersion = 1;

// Where a replay ran out of memory: the request it could not serve.
struct WhatIfOom {
    uint64_t request_index = 0;   // of the device's requests, from 0
    uint64_t requested_bytes = 0; // what the tensor (or cudaMalloc) asked for
    uint64_t time_ns = 0;         // when the run made the request
    uint64_t stream = 0;
    uint64_t stack_id = 0;       // the recorded stack (0: none): `gpumemtrace dump` shows it
    uint64_t reserved_bytes = 0; // what the allocator held then
    uint64_t allocated_bytes = 0;
};
GMT_DESCRIBE(WhatIfOom, GMT_MEMBER(request_index), GMT_MEMBER(requested_bytes), GMT_MEMBER(time_ns),
             GMT_MEMBER(stream), GMT_MEMBER(stack_id), GMT_MEMBER(reserved_bytes),
             GMT_MEMBER(allocated_bytes))

struct WhatIfCapacity {
    std::string name; // as given: "24GiB", "A100-40GB"
    uint64_t capacity_bytes = 0;
    bool fits = true;
    std::optional<WhatIfOom> oom; // where it ran out (null when it fits)
};
GMT_DESCRIBE(WhatIfCapacity, GMT_MEMBER(name), GMT_MEMBER(capacity_bytes), GMT_MEMBER(fits),
             GMT_MEMBER(oom))

// One setting's replay.
struct WhatIfSetting {
    std::string setting; // as PYTORCH_CUDA_ALLOC_CONF spells it ("" for the defaults)
    std::string label;   // "recorded", "default", or the setting
    std::string model;   // "caching_allocator" or "stream_ordered_pool"
    uint64_t peak_reserved_bytes = 0;
    uint64_t peak_reserved_time_ns = 0;
    uint64_t peak_allocated_bytes = 0;
    uint64_t fragmentation_bytes = 0; // reserved, not allocated, at the reserved peak
    uint64_t cuda_malloc_calls = 0;   // segments taken or ranges mapped
    uint64_t cuda_free_calls = 0;     // segments given back or ranges unmapped
    std::vector<WhatIfCapacity> capacities;
    // The least capacity it fits in (2 MiB steps); null when not computed (a note says why).
    std::optional<uint64_t> min_capacity_bytes;
    bool exact = true; // deterministic given the recorded requests
    std::string why;   // why exact, or why an estimate
};
GMT_DESCRIBE(WhatIfSetting, GMT_MEMBER(setting), GMT_MEMBER(label), GMT_MEMBER(model),
             GMT_MEMBER(peak_reserved_bytes), GMT_MEMBER(peak_reserved_time_ns),
             GMT_MEMBER(peak_allocated_bytes), GMT_MEMBER(fragmentation_bytes),
             GMT_MEMBER(cuda_malloc_calls), GMT_MEMBER(cuda_free_calls), GMT_MEMBER(capacities),
             GMT_MEMBER(min_capacity_bytes), GMT_MEMBER(exact), GMT_MEMBER(why))

// What the recording itself says (a trace without block events: its cudaMalloc calls).
struct WhatIfRecorded {
    std::string setting; // the run's PYTORCH_CUDA_ALLOC_CONF ("" when unset or unknown)
    std::string backend; // "native", "cudaMallocAsync", "" when unknown
    uint64_t peak_reserved_bytes = 0;
    uint64_t segment_allocs = 0;
    uint64_t segment_frees = 0;
    uint64_t ooms = 0;
    // At the run's first OOM: what the allocator held plus the driver's free bytes, the
    // memory it could have had (0 without one). Replayed as the capacity "recorded".
    uint64_t oom_capacity_bytes = 0;
    // The replay of the run's own settings gave the recorded peak and segment counts back.
    std::optional<bool> replay_matches;
};
GMT_DESCRIBE(WhatIfRecorded, GMT_MEMBER(setting), GMT_MEMBER(backend),
             GMT_MEMBER(peak_reserved_bytes), GMT_MEMBER(segment_allocs), GMT_MEMBER(segment_frees),
             GMT_MEMBER(ooms), GMT_MEMBER(oom_capacity_bytes), GMT_MEMBER(replay_matches))

// One process's device.
struct WhatIfRun {
    std::string trace;
    uint64_t pid = 0;
    int64_t device = 0; // the types the report's JSON reader reads (report_json_reader.cpp)
    std::string source; // "pytorch_blocks" or "cuda_calls"
    uint64_t requests = 0;
    uint64_t allocations = 0;
    uint64_t streams = 0;
    uint64_t device_total_bytes = 0; // as recorded (0: unknown)
    WhatIfRecorded recorded;
    std::vector<WhatIfSetting> settings;
    std::vector<std::string> notes;
};
GMT_DESCRIBE(WhatIfRun, GMT_MEMBER(trace), GMT_MEMBER(pid), GMT_MEMBER(device), GMT_MEMBER(source),
             GMT_MEMBER(requests), GMT_MEMBER(allocations), GMT_MEMBER(streams),
             GMT_MEMBER(device_total_bytes), GMT_MEMBER(recorded), GMT_MEMBER(settings),
             GMT_MEMBER(notes))

struct WhatIfReport {
    int schema_version = kWhatIfSchemaVersion;
    std::string generator;
    std::vector<WhatIfRun> runs;
};
GMT_DESCRIBE(WhatIfReport, GMT_MEMBER(schema_version), GMT_MEMBER(generator), GMT_MEMBER(runs))

} // namespace gmt::analyzer
