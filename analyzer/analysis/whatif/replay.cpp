#include "analysis/whatif/replay.h"

#include "analysis/whatif/stream_ordered_pool.h"

#include <algorithm>
#include <unordered_map>

namespace gmt::analyzer {

namespace {

constexpr uint64_t kCapacityStep = 2u << 20;

// The most bytes the tensors hold at once, each rounded as `rules` round it: no allocator
// of those rules fits in less.
uint64_t tensorPeak(const RequestStream& requests, const AllocatorRules& rules) {
    std::unordered_map<uint32_t, uint64_t> live;
    uint64_t now = 0, peak = 0;
    for (const Request& r : requests.requests) {
        if (r.kind == RequestKind::Alloc) {
            const uint64_t bytes = rules.roundSize(r.size);
            live[r.id] = bytes;
            now += bytes;
            peak = std::max(peak, now);
        } else if (r.kind == RequestKind::FreeRequested) {
            if (auto it = live.find(r.id); it != live.end()) {
                now -= it->second;
                live.erase(it);
            }
        }
    }
    return peak;
}

WhatIfOom oomOf(const ModelOom& o, const RequestStream& requests) {
    WhatIfOom out;
    out.request_index = o.request_index;
    out.requested_bytes = o.requested_bytes;
    out.time_ns = o.time_ns;
    out.stream = o.stream < requests.streams.size() ? requests.streams[o.stream] : 0;
    out.stack_id = o.stack;
    out.reserved_bytes = o.reserved_bytes;
    out.allocated_bytes = o.allocated_bytes;
    return out;
}

std::string count(uint64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Whether a setting's prediction is exact, and why (or why not).
void judge(WhatIfSetting& out, const ReplaySetting& setting, const TraceRequests& trace,
           const RequestStream& requests, bool with_capacity) {
    std::vector<std::string> estimates;
    if (setting.rules.async_backend) {
        estimates.push_back("the cudaMallocAsync pool places blocks by the CUDA driver's own "
                            "undocumented policy: approximated by a stream-ordered pool model");
    }
    if (requests.source == RequestSource::CudaCalls) {
        estimates.push_back("the program's own cudaMalloc calls stand in for tensor requests");
    }
    if (!setting.not_understood.empty()) {
        estimates.push_back("the run's setting " + setting.not_understood + " is not modeled");
    }
    if (!trace.complete) {
        estimates.push_back("the trace is incomplete (" + trace.incomplete + ")");
    }
    if (requests.private_pool_events > 0) {
        estimates.push_back(count(requests.private_pool_events, "event", "events") +
                            " of CUDA graphs' private pools are not replayed");
    }
    if (requests.oversized_requests > 0) {
        estimates.push_back(count(requests.oversized_requests, "request", "requests") +
                            " larger than any device (damaged sizes) left out");
    }
    if (requests.unmatched_frees > 0) {
        estimates.push_back(count(requests.unmatched_frees, "free", "frees") +
                            " of blocks the trace did not allocate");
    }
    if (requests.deferred_frees > 0 && !setting.recorded) {
        estimates.push_back(count(requests.deferred_frees, "free", "frees") +
                            " waited for other streams: under another setting they may "
                            "complete at other moments (GPU timing)");
    }
    out.exact = estimates.empty();
    if (out.exact) {
        out.why = "deterministic: the recorded requests, streams and frees in their order, "
                  "under PyTorch's caching allocator rules";
        if (setting.rules.garbage_collection_threshold > 0 && !with_capacity) {
            out.why += "; garbage_collection_threshold acts only against a capacity "
                       "(PyTorch: a per-process memory fraction), so without one it changes "
                       "nothing";
        }
        return;
    }
    out.why = "estimate: ";
    for (size_t i = 0; i < estimates.size(); ++i) {
        out.why += (i ? "; " : "") + estimates[i];
    }
}

} // namespace

// The check of the model against the run itself: its own settings, without a limit, must
// give back the recorded peak and segment counts.
void checkAgainstRecording(WhatIfRun& run, const RequestStream& requests,
                           const ReplaySetting& own) {
    WhatIfRecorded& rec = run.recorded;
    const ModelFigures f = replayOnce(requests, policyOf(own), std::nullopt).figures;
    rec.replay_matches = f.peak_reserved_bytes == rec.peak_reserved_bytes &&
                         f.cuda_malloc_calls == rec.segment_allocs &&
                         f.cuda_free_calls == rec.segment_frees;
    if (!*rec.replay_matches) {
        run.notes.push_back("the replay of the run's own settings differs from the recording "
                            "(peak " +
                            std::to_string(f.peak_reserved_bytes) + " vs " +
                            std::to_string(rec.peak_reserved_bytes) + " bytes, " +
                            std::to_string(f.cuda_malloc_calls) + "/" +
                            std::to_string(f.cuda_free_calls) + " vs " +
                            std::to_string(rec.segment_allocs) + "/" +
                            std::to_string(rec.segment_frees) + " segments taken/given back)");
    }
}

ModelPolicy policyOf(const ReplaySetting& setting) {
    if (setting.rules.async_backend) {
        return streamOrderedPoolPolicy();
    }
    ModelPolicy p;
    p.rules = setting.rules;
    return p;
}

ReplayResult replayOnce(const RequestStream& requests, const ModelPolicy& policy,
                        std::optional<uint64_t> capacity) {
    AllocatorModel model(policy, capacity);
    ReplayResult out;
    for (size_t i = 0; i < requests.requests.size(); ++i) {
        if (!model.apply(requests.requests[i], i)) {
            break;
        }
    }
    out.figures = model.figures();
    out.oom = model.oom();
    return out;
}

uint64_t minCapacity(const RequestStream& requests, const ModelPolicy& policy,
                     uint64_t unlimited_peak) {
    // Below what the tensors hold at once nothing fits, but for expandable segments' last
    // page: PyTorch checks its limit before mapping it (allocator_model.cpp, grow()), so
    // they may hold up to 18 MiB (a 20 MiB page less the 2 MiB a request is rounded to)
    // more than the capacity.
    const uint64_t tensors = tensorPeak(requests, policy.rules);
    const uint64_t overshoot = policy.rules.expandable_segments && !policy.one_pool
                                   ? AllocatorRules::kLargeBuffer - AllocatorRules::kRoundLarge
                                   : 0;
    uint64_t low = (tensors - std::min(tensors, overshoot)) / kCapacityStep; // fails below
    uint64_t high = (unlimited_peak + kCapacityStep - 1) / kCapacityStep;
    auto fits = [&](uint64_t steps) {
        return !replayOnce(requests, policy, steps * kCapacityStep).oom;
    };
    // The unlimited peak fits but for garbage collection's different choices; a few
    // doublings find a capacity that does.
    for (int i = 0; i < 4 && !fits(high); ++i) {
        low = high;
        high *= 2;
    }
    if (low >= high) {
        return high * kCapacityStep;
    }
    if (low > 0 && fits(low)) {
        return low * kCapacityStep;
    }
    // Invariant: `low` fails (or is 0), `high` fits.
    while (high - low > 1) {
        const uint64_t mid = low + (high - low) / 2;
        (fits(mid) ? high : low) = mid;
    }
    return high * kCapacityStep;
}

WhatIfRun replayRun(const TraceRequests& trace, const RequestStream& requests,
                    const std::vector<ReplaySetting>& settings,
                    const std::vector<NamedCapacity>& capacities, uint64_t min_capacity_requests) {
    WhatIfRun run;
    run.trace = trace.path;
    run.pid = trace.pid;
    run.device = requests.device;
    run.source = requests.source == RequestSource::PyTorchBlocks ? "pytorch_blocks" : "cuda_calls";
    run.requests = requests.requests.size();
    run.allocations = requests.allocations;
    run.streams = requests.streams.size();
    for (const auto& [ordinal, bytes] : trace.device_total_bytes) {
        if (ordinal == requests.device) {
            run.device_total_bytes = bytes;
        }
    }
    WhatIfRecorded& rec = run.recorded;
    rec.backend = trace.backend;
    rec.peak_reserved_bytes = requests.recorded.peak_reserved_bytes;
    rec.segment_allocs = requests.recorded.segment_allocs;
    rec.segment_frees = requests.recorded.segment_frees;
    rec.ooms = requests.recorded.ooms;
    rec.oom_capacity_bytes = requests.recorded.oom_capacity_bytes;
    const ReplaySetting own = recordedSetting(trace.config, trace.backend);
    rec.setting = own.setting;
    if (requests.pressure_releases > 0) {
        run.notes.push_back(
            "the run gave cached segments back " +
            count(requests.pressure_releases, "time", "times") +
            " to make room inside an allocation: its device was short of memory; a replay "
            "without a capacity keeps them cached");
    }
    if (requests.recorded.ooms > 0) {
        run.notes.push_back(
            "the run ran out of memory " + count(requests.recorded.ooms, "time", "times") +
            "; each request it could not serve is tried in the replay and freed at once "
            "(the run never used it)");
    }
    // Without capacities asked for, a run that ran out of memory is replayed at the memory
    // it had: would another setting have avoided its OOM?
    std::vector<NamedCapacity> limits = capacities;
    if (limits.empty() && rec.oom_capacity_bytes > 0) {
        limits.push_back({"recorded", rec.oom_capacity_bytes});
    }
    for (const ReplaySetting& s : settings) {
        WhatIfSetting out;
        out.setting = s.setting;
        out.label = s.label;
        out.model = s.rules.async_backend ? "stream_ordered_pool" : "caching_allocator";
        const ModelPolicy policy = policyOf(s);
        const ReplayResult unlimited = replayOnce(requests, policy, std::nullopt);
        const ModelFigures& f = unlimited.figures;
        out.peak_reserved_bytes = f.peak_reserved_bytes;
        out.peak_reserved_time_ns = f.peak_reserved_time_ns;
        out.peak_allocated_bytes = f.peak_allocated_bytes;
        out.fragmentation_bytes = f.fragmentation_bytes;
        out.cuda_malloc_calls = f.cuda_malloc_calls;
        out.cuda_free_calls = f.cuda_free_calls;
        for (const NamedCapacity& c : limits) {
            WhatIfCapacity cap;
            cap.name = c.name;
            cap.capacity_bytes = c.bytes;
            const ReplayResult at = replayOnce(requests, policy, c.bytes);
            cap.fits = !at.oom;
            if (at.oom) {
                cap.oom = oomOf(*at.oom, requests);
            }
            out.capacities.push_back(cap);
        }
        if (requests.requests.empty()) {
            out.min_capacity_bytes = 0;
        } else if (requests.requests.size() <= min_capacity_requests) {
            out.min_capacity_bytes = minCapacity(requests, policy, f.peak_reserved_bytes);
        }
        judge(out, s, trace, requests, !limits.empty());
        run.settings.push_back(std::move(out));
    }
    if (requests.source == RequestSource::PyTorchBlocks && !own.rules.async_backend) {
        checkAgainstRecording(run, requests, own);
    }
    if (!requests.requests.empty() && requests.requests.size() > min_capacity_requests) {
        run.notes.push_back("the least capacity is not computed: " +
                            count(requests.requests.size(), "request", "requests") +
                            ", more than the " + std::to_string(min_capacity_requests) +
                            " it is searched for here (a dozen replays per setting); "
                            "`gpumemtrace whatif` computes it");
    }
    return run;
}

} // namespace gmt::analyzer
