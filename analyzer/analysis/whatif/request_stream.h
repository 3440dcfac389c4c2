// The allocation requests of one recorded run, per device, in the order the program made
// them: what the what-if replay (replay.h) drives an allocator model with. From a PyTorch
// trace they are the caching allocator's block events (docs/trace-format.md, "Block
// events": the bytes each tensor asked for, its stream, when it was freed and when its
// memory became reusable); from a trace without them, the program's own cudaMalloc and
// cudaFree calls. Beside them, what the recording itself says the allocator did (its
// segments), to check a replay of the run's own settings against.
//
// Memory: 32 bytes a request, plus the allocations live at once while reading; nothing is
// sized from a value in the file.
#pragma once

#include <gpumemtrace/format/event.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gmt::analyzer {

enum class RequestKind : uint8_t {
    Alloc,         // a tensor (or cudaMalloc) asked for `size` bytes on `stream`
    FreeRequested, // freed by the program: no longer allocated
    FreeCompleted, // its memory may be used again (after the streams it was used on)
    Release,       // the program gave the cache back (torch.cuda.empty_cache())
    // A request the recorded allocator could not serve (its oom event): tried, and freed
    // at once when it succeeds (the run never got to use it).
    Attempt,
};

struct Request {
    uint64_t time_ns = 0;
    uint64_t size = 0;   // Alloc: bytes asked for
    uint32_t id = 0;     // the allocation, numbered in Alloc order
    uint32_t stack = 0;  // the recorded stack id (0: none)
    uint32_t stream = 0; // index into RequestStream::streams
    RequestKind kind = RequestKind::Alloc;
};

// What the recording says about the run's segments (for a trace without block events: its
// cudaMalloc calls, which are then the "segments").
struct RecordedSegments {
    uint64_t peak_reserved_bytes = 0;
    uint64_t segment_allocs = 0; // segment_alloc and segment_map events (cudaMalloc calls)
    uint64_t segment_frees = 0;  // segment_free and segment_unmap events (cudaFree calls)
    uint64_t ooms = 0;
    // At the first oom: what the allocator held plus what the driver said was free, the
    // memory the run could have had (0 without an oom).
    uint64_t oom_capacity_bytes = 0;
};

enum class RequestSource : uint8_t {
    PyTorchBlocks, // a caching allocator's block events
    CudaCalls,     // cudaMalloc / cuMemAlloc / cudaMallocAsync and their frees
};

// The largest request replayed (512 GiB): beyond any device, so a larger size in a trace is
// damage; leaving it out keeps the models' sums and address space within bounds.
inline constexpr uint64_t kMaxRequestBytes = uint64_t{1} << 39;

// The program's own device allocations (cudaMalloc, cuMemAlloc, cudaMallocAsync): what a
// caching allocator would have served, the requests of a trace without block events.
inline bool cudaDeviceAlloc(const format::Event& e) {
    return e.op == format::Op::Alloc && e.result == 0 &&
           (e.kind == format::Kind::Device || e.kind == format::Kind::Pool);
}

// A block event of a CUDA graph's private pool: its blocks never mix with the ordinary
// pools, and the replay does not model graph capture.
inline bool inPrivatePool(const format::Event& e) {
    return e.handle != 0 || e.offset != 0;
}

// makesAllocationRequest (below) for an event known not to be a block event: what the
// analysis sees of most events, tested without a second look at the op.
inline bool makesCallRequest(const format::Event& e) {
    return cudaDeviceAlloc(e) && e.size <= kMaxRequestBytes;
}
// Whether readRequests makes an Alloc or Attempt request of this event (a block allocation
// or oom outside CUDA graphs' private pools, or a cudaDeviceAlloc, of a size replayed).
// Counted while the analysis reads a trace (ProcessData::allocation_requests), their number
// is a lower bound on the trace's requests: a report knows a trace is beyond what it
// replays without reading it again (trace_whatif.h). Beyond 4 billion allocations of a
// device (32-bit ids) it counts some that are not read; the bound is far below.
inline bool makesAllocationRequest(const format::Event& e) {
    if (e.op != format::Op::Block) {
        return makesCallRequest(e);
    }
    const auto action = static_cast<format::BlockAction>(e.api);
    return e.size <= kMaxRequestBytes && !inPrivatePool(e) &&
           (action == format::BlockAction::Alloc || action == format::BlockAction::Oom);
}

struct RequestStream {
    int device = 0;
    RequestSource source = RequestSource::PyTorchBlocks;
    std::vector<Request> requests;
    std::vector<uint64_t> streams; // the stream handles, by index
    uint32_t allocations = 0;
    RecordedSegments recorded;
    // Why a replay may not repeat the run exactly.
    uint64_t deferred_frees = 0;      // frees completed later, after other streams' work
    uint64_t private_pool_events = 0; // CUDA graphs' private pools: not replayed
    uint64_t unmatched_frees = 0;     // frees of nothing the trace allocated
    uint64_t oversized_requests = 0;  // above kMaxRequestBytes: no device holds them; left out
    // Segments the recorded allocator gave back inside an allocation (memory was short):
    // a replay without that capacity keeps them.
    uint64_t pressure_releases = 0;
};

struct TraceRequests {
    std::string path;
    uint64_t pid = 0;
    std::string config;                 // the recorded PYTORCH_CUDA_ALLOC_CONF lines, as recorded
    std::string backend;                // the caching allocator's backend as recorded ("" unknown)
    bool attached = false;              // the recorder attached to PyTorch's caching allocator
    bool complete = true;               // the trace ended cleanly and lost no events
    std::string incomplete;             // why not, when not
    std::vector<RequestStream> devices; // in device order
    std::vector<std::pair<int, uint64_t>> device_total_bytes; // (ordinal, bytes) recorded
    // More than the max_requests readRequests was given: it stopped reading, `devices` is
    // empty, and requests_held says how many it had read by then.
    bool too_many_requests = false;
    uint64_t requests_held = 0;
    RequestSource source_held = RequestSource::PyTorchBlocks; // of those requests
};

// Reads one trace (throws TraceError for a file that is not one), up to `max_requests`
// requests over all devices (then TraceRequests::too_many_requests: what a report bounds
// its cost by).
TraceRequests readRequests(const std::string& path, uint64_t max_requests = UINT64_MAX);

} // namespace gmt::analyzer
