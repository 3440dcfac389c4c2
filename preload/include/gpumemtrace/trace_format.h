// The trace format: the one contract between the recorder (preload/) and the analyzer
// (analyzer/). Header-only so both halves compile the same definitions; the prose
// description, byte by byte, is docs/trace-format.md. Any change here that is not
// purely additive must bump kFormatVersion.
//
// File layout
//
//   0            4096                   4096 + slots*128
//   +------------+----------------------+-----------------------------------------+
//   | prologue   | ring (MAP_SHARED)    | log: frame, frame, frame, ...           |
//   +------------+----------------------+-----------------------------------------+
//
// Producers (application threads) commit fixed-size slots into the ring, which is a
// shared mapping of the file itself: a committed slot is in the page cache the moment
// the call returns, so it survives SIGKILL. The writer thread drains slots in sequence
// order into compact, checksummed frames appended to the log. A reader takes every valid
// frame, then every committed ring slot whose sequence number the frames do not cover.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gmt::format {

inline constexpr char kMagic[8] = {'G', 'M', 'T', 'R', 'A', 'C', 'E', '\0'};
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr uint64_t kPrologueSize = 4096;
inline constexpr uint32_t kSlotSize = 128;
inline constexpr uint32_t kFrameMagic = 0x52464d47; // "GMFR" little-endian
inline constexpr uint32_t kMaxFramePayload = 16u << 20;
inline constexpr uint32_t kMaxRecordSize = 1u << 20;
inline constexpr uint32_t kMaxStackDepth = 256;
// Python frames carried by one stack (innermost kept); see StackInfo::python.
inline constexpr uint32_t kMaxPythonDepth = 128;
inline constexpr uint32_t kMinRingSlots = 1024;
inline constexpr uint32_t kMaxRingSlots = 1u << 24;

// ---------------------------------------------------------------------------------
// Enumerations. Values are part of the format: append only.

enum class Op : uint8_t {
    Alloc = 1,          // an allocation (or its failure: result != 0)
    Free = 2,           // a free / release of an allocation
    VmmReserve = 3,     // cuMemAddressReserve: address range, no bytes
    VmmAddressFree = 4, // cuMemAddressFree
    VmmCreate = 5,      // cuMemCreate / import: a physical handle with bytes
    VmmRelease = 6,     // cuMemRelease of a handle
    VmmMap = 7,         // cuMemMap: handle mapped at address
    VmmUnmap = 8,       // cuMemUnmap of an address range
    Teardown = 9,       // cudaDeviceReset / primary ctx reset (device) / cuCtxDestroy (context)
    CtxCreate = 10,     // cuCtxCreate: a non-primary context (teardown rules need it)
    PoolCreate = 11,
    PoolDestroy = 12,
    PoolTrim = 13,
    VmmRetain = 14, // cuMemRetainAllocationHandle: one more reference to a mapped handle
    // A framework's caching allocator handed out, freed, or took from CUDA a block inside
    // its segments (PyTorch's trace tracker): `api` holds the BlockAction. Never an
    // allocation of the process's own: the segments are (Alloc / VmmMap events).
    Block = 15,
};

// What a Block event says the caching allocator did (Event::api of an Op::Block event).
// Values are part of the format: append only.
enum class BlockAction : uint8_t {
    Alloc = 1,         // a block handed out: address, size = bytes asked for, stream
    FreeRequested = 2, // the program freed it: no longer allocated
    FreeCompleted = 3, // its memory is free for reuse (after the streams it was used on)
    SegmentAlloc = 4,  // a segment taken from CUDA (cudaMalloc): address, size
    SegmentFree = 5,   // a segment given back (before its cudaFree)
    SegmentMap = 6,    // expandable segments: a range mapped (cuMemMap) into a segment
    SegmentUnmap = 7,  // a range unmapped
    Oom = 8,           // the allocator gave up: size = bytes asked for (rounded),
                       // device_free = what the driver said was free
};

inline std::string_view blockActionName(uint8_t action) {
    switch (static_cast<BlockAction>(action)) {
    case BlockAction::Alloc:
        return "alloc";
    case BlockAction::FreeRequested:
        return "free_requested";
    case BlockAction::FreeCompleted:
        return "free_completed";
    case BlockAction::SegmentAlloc:
        return "segment_alloc";
    case BlockAction::SegmentFree:
        return "segment_free";
    case BlockAction::SegmentMap:
        return "segment_map";
    case BlockAction::SegmentUnmap:
        return "segment_unmap";
    case BlockAction::Oom:
        return "oom";
    }
    return "unknown";
}

// Which caching allocator a Block event came from (the low byte of Event::flags).
enum class BlockSource : uint8_t {
    Unknown = 0,
    PyTorch = 1, // c10::cuda::CUDACachingAllocator (the native backend)
};

enum class Kind : uint8_t {
    None = 0,
    Device = 1,
    Pool = 2,
    Managed = 3,
    HostPinned = 4,
    Array = 5,
    Vmm = 6,
    // A block a caching allocator handed out inside one of its segments (Op::Block): the
    // tensor level. Its bytes are inside the segments' and never counted with them.
    Block = 7,
};

// Every API the recorder names. X(id, name): name is the exact C function name.
#define GMT_TRACE_APIS(X)                                                                          \
    X(1, cudaMalloc)                                                                               \
    X(2, cudaFree)                                                                                 \
    X(3, cudaMallocPitch)                                                                          \
    X(4, cudaMalloc3D)                                                                             \
    X(5, cudaMallocAsync)                                                                          \
    X(6, cudaMallocFromPoolAsync)                                                                  \
    X(7, cudaFreeAsync)                                                                            \
    X(8, cudaMallocManaged)                                                                        \
    X(9, cudaMallocHost)                                                                           \
    X(10, cudaHostAlloc)                                                                           \
    X(11, cudaFreeHost)                                                                            \
    X(12, cudaHostRegister)                                                                        \
    X(13, cudaHostUnregister)                                                                      \
    X(14, cudaMallocArray)                                                                         \
    X(15, cudaMalloc3DArray)                                                                       \
    X(16, cudaMallocMipmappedArray)                                                                \
    X(17, cudaFreeArray)                                                                           \
    X(18, cudaFreeMipmappedArray)                                                                  \
    X(19, cudaDeviceReset)                                                                         \
    X(20, cudaMemPoolCreate)                                                                       \
    X(21, cudaMemPoolDestroy)                                                                      \
    X(22, cudaMemPoolTrimTo)                                                                       \
    X(23, cudaMallocAsync_ptsz)                                                                    \
    X(24, cudaMallocFromPoolAsync_ptsz)                                                            \
    X(25, cudaFreeAsync_ptsz)                                                                      \
    X(40, cuMemAlloc_v2)                                                                           \
    X(41, cuMemAllocPitch_v2)                                                                      \
    X(42, cuMemFree_v2)                                                                            \
    X(43, cuMemAllocAsync)                                                                         \
    X(44, cuMemAllocAsync_ptsz)                                                                    \
    X(45, cuMemAllocFromPoolAsync)                                                                 \
    X(46, cuMemAllocFromPoolAsync_ptsz)                                                            \
    X(47, cuMemFreeAsync)                                                                          \
    X(48, cuMemFreeAsync_ptsz)                                                                     \
    X(49, cuMemAllocManaged)                                                                       \
    X(50, cuMemAllocHost_v2)                                                                       \
    X(51, cuMemHostAlloc)                                                                          \
    X(52, cuMemFreeHost)                                                                           \
    X(53, cuMemHostRegister_v2)                                                                    \
    X(54, cuMemHostUnregister)                                                                     \
    X(55, cuArrayCreate_v2)                                                                        \
    X(56, cuArray3DCreate_v2)                                                                      \
    X(57, cuArrayDestroy)                                                                          \
    X(58, cuMipmappedArrayCreate)                                                                  \
    X(59, cuMipmappedArrayDestroy)                                                                 \
    X(60, cuMemAddressReserve)                                                                     \
    X(61, cuMemAddressFree)                                                                        \
    X(62, cuMemCreate)                                                                             \
    X(63, cuMemRelease)                                                                            \
    X(64, cuMemMap)                                                                                \
    X(65, cuMemUnmap)                                                                              \
    X(66, cuMemImportFromShareableHandle)                                                          \
    X(67, cuDevicePrimaryCtxReset_v2)                                                              \
    X(68, cuCtxDestroy_v2)                                                                         \
    X(69, cuCtxCreate_v4)                                                                          \
    X(70, cuMemPoolCreate)                                                                         \
    X(71, cuMemPoolDestroy)                                                                        \
    X(72, cuMemPoolTrimTo)                                                                         \
    X(82, cuCtxCreate_v2)                                                                          \
    X(83, cuCtxCreate_v3)                                                                          \
    X(84, cuMemRetainAllocationHandle)

enum class Api : uint8_t {
    Unknown = 0,
#define GMT_API_ENUM(id, name) name = id,
    GMT_TRACE_APIS(GMT_API_ENUM)
#undef GMT_API_ENUM
};

inline std::string_view apiName(Api api) {
    switch (api) {
#define GMT_API_NAME(id, name)                                                                     \
    case Api::name:                                                                                \
        return #name;
        GMT_TRACE_APIS(GMT_API_NAME)
#undef GMT_API_NAME
    default:
        return "unknown";
    }
}

inline std::string_view kindName(Kind kind) {
    switch (kind) {
    case Kind::Device:
        return "device";
    case Kind::Pool:
        return "pool";
    case Kind::Managed:
        return "managed";
    case Kind::HostPinned:
        return "host_pinned";
    case Kind::Array:
        return "array";
    case Kind::Vmm:
        return "vmm";
    case Kind::Block:
        return "block";
    default:
        return "none";
    }
}

inline std::string_view opName(Op op) {
    switch (op) {
    case Op::Alloc:
        return "alloc";
    case Op::Free:
        return "free";
    case Op::VmmReserve:
        return "vmm_reserve";
    case Op::VmmAddressFree:
        return "vmm_address_free";
    case Op::VmmCreate:
        return "vmm_create";
    case Op::VmmRelease:
        return "vmm_release";
    case Op::VmmMap:
        return "vmm_map";
    case Op::VmmUnmap:
        return "vmm_unmap";
    case Op::Teardown:
        return "teardown";
    case Op::CtxCreate:
        return "ctx_create";
    case Op::PoolCreate:
        return "pool_create";
    case Op::PoolDestroy:
        return "pool_destroy";
    case Op::PoolTrim:
        return "pool_trim";
    case Op::VmmRetain:
        return "vmm_retain";
    case Op::Block:
        return "block";
    default:
        return "unknown";
    }
}

// What an event's api byte names: the API called, or for a Block event the caching
// allocator's action.
inline std::string_view eventApiName(Op op, Api api) {
    return op == Op::Block ? blockActionName(static_cast<uint8_t>(api)) : apiName(api);
}

// Event flags (Event::flags). The CUDA call's own flags go in the low 32 bits' lower half
// where they matter (cudaHostAlloc flags, managed attach flags); these mark our facts.
inline constexpr uint32_t kFlagHostLocated = 1u << 31; // VmmCreate: handle lives in host memory
// VmmCreate: imported with cuMemImportFromShareableHandle. The memory belongs to the process
// that created it (possibly this one); the size is not known to the importer (see
// docs/analysis.md), so it is 0.
inline constexpr uint32_t kFlagImported = 1u << 29;
// Block (free_requested, free_completed): made while the interpreter was finalizing (at
// exit, CPython freeing what modules still referenced), not by the program's own code.
inline constexpr uint32_t kFlagInterpreterExiting = 1u << 28;
inline constexpr uint32_t kBlockSourceMask = 0xff; // Block: the BlockSource

// ---------------------------------------------------------------------------------
// One recorded call. This is the logical event both halves agree on; in the ring it is
// stored as is (fixed layout), in the log it is delta-encoded (see encodeEvent).
//
// Field use per op:
//   Alloc/Free      address = pointer (or array handle), size = bytes asked for,
//                   actual_size = bytes held when it differs (pitch*height), offset = pitch,
//                   handle = pool (pool allocations), stream = stream
//   VmmReserve      address, size = range size, offset = requested alignment
//   VmmCreate       handle, size, device = location id; kFlagHostLocated for host memory;
//                   kFlagImported (size 0) for an import
//   VmmRelease      handle
//   VmmRetain       handle (the one mapped at address), address = the address asked about
//   VmmMap          address, size, handle, offset = offset into the handle
//   VmmUnmap        address, size
//   Teardown        device (device resets) or context (cuCtxDestroy)
//   CtxCreate       context, device
//   Pool*           handle = pool, device, size = trim target
//   Block           api = BlockAction, address, size, stream, device, handle/offset = the
//                   allocator's memory pool id (CUDA graphs' private pools; 0, 0 otherwise),
//                   kind = Block, flags = BlockSource | kFlagInterpreterExiting,
//                   device_free = free bytes (Oom)
//   failures        result != 0; device_free/device_total = cuMemGetInfo on OOM
struct Event {
    uint64_t time_ns = 0; // CLOCK_MONOTONIC
    uint64_t address = 0;
    uint64_t size = 0;
    uint64_t actual_size = 0;
    uint64_t handle = 0;
    uint64_t stream = 0;
    uint64_t context = 0;
    uint64_t offset = 0;
    uint64_t device_free = 0;
    uint64_t device_total = 0;
    uint32_t flags = 0;
    uint32_t stack_id = 0; // 0: no stack recorded
    uint32_t tid = 0;      // kernel thread id
    int32_t result = 0;    // CUresult or cudaError_t of the call; 0 = success
    int16_t device = -1;   // ordinal; -1 = host / unknown
    Op op = Op::Alloc;
    Api api = Api::Unknown;
    Kind kind = Kind::None;
    uint8_t reserved[3] = {};
};
static_assert(sizeof(Event) == 104);

// ---------------------------------------------------------------------------------
// Prologue: the first 4096 bytes. Written once at creation, except `dropped_events` and
// `flags`, which the recorder updates in place (they live in the shared mapping, so they
// are durable).
struct Prologue {
    char magic[8];
    uint32_t format_version;
    uint32_t prologue_size; // sizeof(Prologue)
    uint64_t ring_offset;   // = kPrologueSize
    uint32_t ring_slots;    // power of two, kMinRingSlots..kMaxRingSlots
    uint32_t slot_size;     // = kSlotSize
    uint64_t log_offset;    // = ring_offset + ring_slots * slot_size
    uint64_t dropped_events;
    uint32_t flags;    // kPrologue* bits
    uint32_t checksum; // crc32c of the bytes before `dropped_events`
};
static_assert(sizeof(Prologue) == 56);
inline constexpr size_t kPrologueChecksummedBytes = offsetof(Prologue, dropped_events);

// Prologue flags. The log could not be written (full file system, quota, file size
// limit): the recorder stopped there. What the log lacks is in the ring; every call after
// the failure counts in `dropped_events`.
inline constexpr uint32_t kPrologueLogFailed = 1u << 0;

// ---------------------------------------------------------------------------------
// Ring slot (kSlotSize bytes). `seq` is written last, with release ordering: the slot
// holds the record for sequence position p exactly when seq == p + 1. A record longer
// than one slot (stacks, modules) takes consecutive positions: a Blob slot carrying the
// total length, then BlobCont slots; every part must be committed for the record to count.
enum class SlotType : uint8_t { Event = 1, Blob = 2, BlobCont = 3 };

struct Slot {
    uint64_t seq;
    SlotType type;
    uint8_t reserved[3];
    uint32_t length; // Blob: total encoded record bytes (tag + length + body)
    uint8_t payload[kSlotSize - 16];
};
static_assert(sizeof(Slot) == kSlotSize);
inline constexpr uint32_t kSlotPayload = kSlotSize - 16;
static_assert(sizeof(Event) <= kSlotPayload);

// ---------------------------------------------------------------------------------
// Log frames. A frame is written with one pwrite; the checksum covers everything after
// the checksum field (header rest + payload), so a torn or partly written frame fails it.
struct FrameHeader {
    uint32_t magic;        // kFrameMagic
    uint32_t checksum;     // crc32c(payload_size..end of payload)
    uint32_t payload_size; // bytes of records following this header
    uint32_t record_count;
    uint64_t end_seq; // ring sequence position just after the last slot this frame covers
};
static_assert(sizeof(FrameHeader) == 24);

// Records inside a frame: tag (1 byte), body length (varint), body. Readers skip tags
// they do not know, so new record types can be added without a version bump.
enum class RecordTag : uint8_t {
    Header = 1,     // process facts: see HeaderInfo
    Device = 2,     // one GPU: see DeviceInfo
    Module = 3,     // a loaded ELF object: see ModuleInfo
    Stack = 4,      // an interned call stack: id, depth, frames (ip-1, delta-coded)
    Event = 5,      // a delta-coded Event
    Trailer = 6,    // clean end of trace: see TrailerInfo
    Phase = 7,      // phase marker (gpumemtrace.h, NVTX ranges): time, name, kind, thread
    PythonCode = 8, // a CPython code object Python frames refer to: see PythonCodeInfo
    CachingAllocator =
        9, // what became of a framework's caching allocator: see CachingAllocatorInfo
};

// What became of Python frames in a traced process (HeaderInfo, TrailerInfo). Append only.
enum class PythonStatus : uint8_t {
    NotDetected = 0, // no CPython in the process (or an older tracer wrote the trace)
    Captured = 1,    // CPython found and its frames are read into the stacks
    Disabled = 2,    // GPUMEMTRACE_PYTHON=0
    Unsupported = 3, // a CPython this tracer cannot read (version, debug or free-threaded build)
    Failed = 4,      // the interpreter's memory did not look as its version says: stopped reading
    Pending = 5,     // found, not yet checked: no thread with Python frames allocated so far
};

inline std::string_view pythonStatusName(PythonStatus s) {
    switch (s) {
    case PythonStatus::Captured:
        return "captured";
    case PythonStatus::Disabled:
        return "disabled";
    case PythonStatus::Unsupported:
        return "unsupported";
    case PythonStatus::Failed:
        return "failed";
    case PythonStatus::Pending:
        return "pending";
    default:
        return "not_detected";
    }
}

// How a PythonCodeInfo's line table is laid out: CPython changed it twice.
enum class PythonLineTable : uint8_t {
    Pairs310 = 1,    // 3.10 co_linetable: (byte delta u8, line delta s8) pairs over byte offsets
    Locations311 = 2 // 3.11+ location table (Objects/locations.md in CPython) over code units
};

struct HeaderInfo {
    uint32_t pid = 0;
    uint32_t ppid = 0;
    uint64_t start_wall_ns = 0; // CLOCK_REALTIME at trace start
    uint64_t start_mono_ns = 0; // CLOCK_MONOTONIC at trace start (events' clock)
    int32_t driver_version = 0;
    uint32_t stack_depth = 0;
    uint64_t granularity = 2u << 20; // default allocation granularity
    std::string command;             // argv joined by spaces
    std::string executable;          // /proc/self/exe target
    std::string host;
    std::string tracer_version;

    // --- Rank block: appended after tracer_version; absent in older traces -------------
    // Where this process sits in a multi-process job, from its launcher's environment
    // (preload/rank_info.cpp says which variables, in which order).
    int32_t rank = -1;       // global rank; -1: not launched as a rank
    int32_t local_rank = -1; // rank on this host; -1: not known
    int32_t world_size = -1; // ranks in the job; -1: not known
    std::string rank_source; // the variable the rank came from ("RANK", "SLURM_PROCID"...)
    // --- end of the rank block ------------------------------------------------------

    // --- Python block: appended after the rank block; absent in older traces ----------
    uint32_t python_version = 0; // PY_VERSION_HEX of the CPython seen, e.g. 0x030b02f0; 0: none
    PythonStatus python_status = PythonStatus::NotDetected; // at the start of the trace
    // --- end of the Python block ----------------------------------------------------
};

struct DeviceInfo {
    int32_t ordinal = 0;
    uint64_t total_bytes = 0;
    uint64_t granularity = 2u << 20;
    std::string name;
};

struct ModuleInfo {
    uint64_t base = 0;  // load bias (dlpi_addr)
    uint64_t start = 0; // lowest mapped address of the PT_LOAD segments
    uint64_t end = 0;   // highest
    std::string path;
    std::string build_id; // raw bytes of NT_GNU_BUILD_ID, may be empty
};

// One Python frame of a stack: which code object, where in it, and where it goes among the
// native frames. `position` is the index of the native evaluation frame
// (_PyEval_EvalFrameDefault) that was running it: the Python frames of one position replace
// that native frame when the stack is shown. position == depth: beyond the recorded native
// frames (the native stack was cut short, or no evaluation frame was recognised).
struct PythonFrame {
    uint32_t code_id = 0;     // a PythonCode record's id
    uint32_t instruction = 0; // offset of the executing instruction, in 16-bit code units
    uint32_t position = 0;
};

struct StackInfo {
    uint32_t id = 0;
    uint32_t depth = 0;
    std::array<uint64_t, kMaxStackDepth> frames{}; // innermost first; return address - 1
    uint32_t python_depth = 0;
    std::array<PythonFrame, kMaxPythonDepth> python{}; // innermost first
};

// A code object, written once before the first stack that refers to it. Lines are not
// recorded per event: the analyzer finds them from the instruction offset and this table.
struct PythonCodeInfo {
    uint32_t id = 0;
    PythonLineTable table_format = PythonLineTable::Locations311;
    int32_t first_line = 0;
    std::string filename;   // co_filename
    std::string name;       // co_qualname (3.11+), co_name (3.10)
    std::string line_table; // co_linetable's bytes
};
inline constexpr uint32_t kMaxPythonFilename = 1024;
inline constexpr uint32_t kMaxPythonName = 512;
inline constexpr uint32_t kMaxPythonLineTable = 12 * 1024;

struct TrailerInfo {
    uint64_t events = 0;
    uint64_t dropped_events = 0;
    uint64_t end_mono_ns = 0;
    uint64_t end_wall_ns = 0;
    int32_t exit_signal = 0; // the fatal signal that ended the process; 0: it exited
    // Ring positions taken by calls that had not returned when the trace ended (another
    // thread inside cudaFree as the process exits): not in the trace, counted here.
    uint64_t in_flight = 0;
    PythonStatus python_status = PythonStatus::NotDetected; // at the end (appended field)
};

// What a Phase record does. Older traces have marks only (the fields are absent).
enum class PhaseKind : uint8_t {
    Mark = 0, // gpumemtrace_mark_phase(): the named phase replaces the current one
    Push = 1, // gpumemtrace_push_phase() or an NVTX range push: a nested phase begins
    Pop = 2,  // gpumemtrace_pop_phase() or an NVTX range pop: the innermost one ends (no name)
};

inline std::string_view phaseKindName(PhaseKind k) {
    switch (k) {
    case PhaseKind::Push:
        return "push";
    case PhaseKind::Pop:
        return "pop";
    default:
        return "mark";
    }
}

struct PhaseInfo {
    uint64_t time_ns = 0;
    std::string name;
    // --- appended: absent in older traces (a mark, thread 0) ----------------------------
    PhaseKind kind = PhaseKind::Mark;
    uint32_t tid = 0; // the thread that marked it: nesting is per thread
};

// What the recorder made of a framework's caching allocator it found loaded
// (RecordTag::CachingAllocator): written once, when it attached to it or gave up. A trace
// without one found none (or was written before such records existed). Append only.
enum class CachingAllocatorStatus : uint8_t {
    Attached = 1,       // its block events (Op::Block) follow
    UnknownVersion = 2, // a version the recorder has no layout for: no block events
    OtherBackend = 3,   // not the native caching allocator (cudaMallocAsync, pluggable)
    Failed = 4,         // its symbol or methods were not where its version puts them
    Disabled = 5,       // GPUMEMTRACE_CACHING_ALLOCATOR=0
};

inline std::string_view cachingAllocatorStatusName(CachingAllocatorStatus s) {
    switch (s) {
    case CachingAllocatorStatus::Attached:
        return "attached";
    case CachingAllocatorStatus::UnknownVersion:
        return "unknown_version";
    case CachingAllocatorStatus::OtherBackend:
        return "other_backend";
    case CachingAllocatorStatus::Failed:
        return "failed";
    case CachingAllocatorStatus::Disabled:
        return "disabled";
    }
    return "unknown";
}

struct CachingAllocatorInfo {
    BlockSource source = BlockSource::PyTorch;
    CachingAllocatorStatus status = CachingAllocatorStatus::Failed;
    uint64_t time_ns = 0;
    std::string version; // the framework's ("2.11.0+cu130"), when known (<= 256)
    std::string detail;  // why not attached, or the backend's name (<= 1024)
    std::string config;  // the allocator's settings from the environment (<= 4096):
                         // "PYTORCH_CUDA_ALLOC_CONF=..." lines
};
inline constexpr uint32_t kMaxCachingAllocatorConfig = 4096;

// ---------------------------------------------------------------------------------
// Checksum: CRC-32C (Castagnoli), table-driven; fast enough for frames of a few KiB.
namespace detail {
constexpr std::array<uint32_t, 256> makeCrcTable() {
    std::array<uint32_t, 256> table{};
    for (uint32_t i = 0; i < 256; ++i) {
        uint32_t c = i;
        for (int k = 0; k < 8; ++k) {
            c = (c & 1) ? (0x82f63b78u ^ (c >> 1)) : (c >> 1);
        }
        table[i] = c;
    }
    return table;
}
inline constexpr std::array<uint32_t, 256> kCrcTable = makeCrcTable();

#if defined(__x86_64__)
// The SSE4.2 crc32 instruction computes the same CRC-32C, 8 bytes at a time: the table
// loop was a fifth of the analyzer's time on large traces.
__attribute__((target("sse4.2"))) inline uint32_t crc32cHardware(const uint8_t* p, size_t size,
                                                                 uint32_t crc) {
    uint64_t c = crc;
    for (; size >= 8; size -= 8, p += 8) {
        uint64_t v;
        std::memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
    }
    crc = static_cast<uint32_t>(c);
    for (; size > 0; --size) {
        crc = __builtin_ia32_crc32qi(crc, *p++);
    }
    return crc;
}

inline bool haveCrc32Instruction() {
    static const bool have = [] {
        __builtin_cpu_init();
        return __builtin_cpu_supports("sse4.2") != 0;
    }();
    return have;
}
#endif
} // namespace detail

inline uint32_t crc32c(const void* data, size_t size, uint32_t crc = 0) {
    auto* p = static_cast<const uint8_t*>(data);
    crc = ~crc;
#if defined(__x86_64__)
    if (detail::haveCrc32Instruction()) {
        return ~detail::crc32cHardware(p, size, crc);
    }
#endif
    for (size_t i = 0; i < size; ++i) {
        crc = detail::kCrcTable[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    }
    return ~crc;
}

// ---------------------------------------------------------------------------------
// Byte-level coding. The writer appends into a caller-owned buffer (no allocation on the
// recording side); the reader decodes from a bounded span and reports overruns instead of
// reading past the end.

class ByteWriter {
  public:
    ByteWriter(uint8_t* buffer, size_t capacity)
        : begin_(buffer), cur_(buffer), end_(buffer + capacity) {}

    bool ok() const { return ok_; }
    size_t size() const { return static_cast<size_t>(cur_ - begin_); }
    uint8_t* data() const { return begin_; }

    void byte(uint8_t b) {
        if (cur_ == end_) {
            ok_ = false;
            return;
        }
        *cur_++ = b;
    }
    void varint(uint64_t v) {
        while (v >= 0x80) {
            byte(static_cast<uint8_t>(v | 0x80));
            v >>= 7;
        }
        byte(static_cast<uint8_t>(v));
    }
    void svarint(int64_t v) {
        varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
    }
    void bytes(const void* p, size_t n) {
        if (static_cast<size_t>(end_ - cur_) < n) {
            ok_ = false;
            return;
        }
        if (n == 0) {
            return; // p may be null (an empty vector's data()); memcpy must not see it
        }
        std::memcpy(cur_, p, n);
        cur_ += n;
    }
    void string(std::string_view s) {
        varint(s.size());
        bytes(s.data(), s.size());
    }

  private:
    uint8_t* begin_;
    uint8_t* cur_;
    uint8_t* end_;
    bool ok_ = true;
};

namespace detail {
// A varint (at most 10 bytes, bits past 64 dropped) from [p, end), advancing p. False when it runs
// past `end` or is longer than 10 bytes. (A branch-free 8-byte-load variant measured slower: field
// lengths repeat per op, so the byte loop predicts well.)
inline bool readVarint(const uint8_t*& p, const uint8_t* end, uint64_t& out) {
    if (p != end && *p < 0x80) [[likely]] {
        out = *p++;
        return true;
    }
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (p == end) {
            return false;
        }
        uint8_t b = *p++;
        v |= static_cast<uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            out = v;
            return true;
        }
    }
    return false;
}

inline uint64_t unzigzag(uint64_t v) {
    return (v >> 1) ^ (~(v & 1) + 1);
}

} // namespace detail

class ByteReader {
  public:
    explicit ByteReader(std::span<const uint8_t> data)
        : cur_(data.data()), end_(data.data() + data.size()) {}

    bool ok() const { return ok_; }
    bool atEnd() const { return cur_ == end_; }
    size_t remaining() const { return static_cast<size_t>(end_ - cur_); }

    uint8_t byte() {
        if (cur_ == end_) {
            ok_ = false;
            return 0;
        }
        return *cur_++;
    }
    uint64_t varint() {
        uint64_t v = 0;
        if (!ok_ || !detail::readVarint(cur_, end_, v)) {
            ok_ = false; // ran past the end, or longer than any varint we write
            cur_ = end_;
            return 0;
        }
        return v;
    }
    int64_t svarint() { return static_cast<int64_t>(detail::unzigzag(varint())); }
    std::span<const uint8_t> bytes(size_t n) {
        if (remaining() < n) {
            ok_ = false;
            cur_ = end_;
            return {};
        }
        std::span<const uint8_t> s(cur_, n);
        cur_ += n;
        return s;
    }
    std::string string(size_t max_len = kMaxRecordSize) {
        uint64_t n = varint();
        if (!ok_ || n > max_len || n > remaining()) {
            ok_ = false;
            return {};
        }
        auto s = bytes(n);
        return std::string(reinterpret_cast<const char*>(s.data()), s.size());
    }

  private:
    const uint8_t* cur_;
    const uint8_t* end_;
    bool ok_ = true;
};

// ---------------------------------------------------------------------------------
// Event delta coding. An event body starts with its op (varint); every other field is
// coded as the zigzag difference from the same field of the previous event *of the same
// op*, and a presence mask (varint) says which differ. Coding against the same op matters
// for the commonest pattern, an alloc/free loop: consecutive allocations share size, stack,
// device and context, so only the time (and maybe the address) changes.
//
//   bit  field          bit  field          bit  field
//   0    time_ns        6    tid            12   device_free
//   1    address        7    device         13   device_total
//   2    size           8    result         14   flags
//   3    stack_id       9    actual_size    15   context
//   4    api            10   handle         16   stream
//   5    kind           11   offset
//
// A one-site cudaMalloc/cudaFree loop costs about 6 bytes per event, record framing
// included (tag, length, op, mask, time delta).
inline constexpr uint32_t kEventFields = 17;
inline constexpr uint32_t kOpSlots = 16; // Op values are below this

// The coder's memory: the previous event of each op. Writer and reader keep one each,
// across frames, and start from default-constructed events (all zero but device = -1).
struct EventCoder {
    Event prev[kOpSlots]{};
};

namespace detail {
template <typename F> void forEachEventField(Event& e, F&& f) {
    uint64_t api = static_cast<uint64_t>(e.api), kind = static_cast<uint64_t>(e.kind),
             stack = e.stack_id, tid = e.tid,
             device = static_cast<uint64_t>(static_cast<int64_t>(e.device)),
             result = static_cast<uint64_t>(static_cast<int64_t>(e.result)), flags = e.flags;
    f(0, e.time_ns);
    f(1, e.address);
    f(2, e.size);
    f(3, stack);
    f(4, api);
    f(5, kind);
    f(6, tid);
    f(7, device);
    f(8, result);
    f(9, e.actual_size);
    f(10, e.handle);
    f(11, e.offset);
    f(12, e.device_free);
    f(13, e.device_total);
    f(14, flags);
    f(15, e.context);
    f(16, e.stream);
    e.api = static_cast<Api>(api);
    e.kind = static_cast<Kind>(kind);
    e.stack_id = static_cast<uint32_t>(stack);
    e.tid = static_cast<uint32_t>(tid);
    e.device = static_cast<int16_t>(static_cast<int64_t>(device));
    e.result = static_cast<int32_t>(static_cast<int64_t>(result));
    e.flags = static_cast<uint32_t>(flags);
}
} // namespace detail

// The largest event body: op (1 byte), mask (3 bytes), 17 deltas of at most 10 bytes.
inline constexpr size_t kMaxEventBody = 1 + 3 + kEventFields * 10;
// The largest event record: tag, body length (2 bytes: the body is under 16 KiB), body.
inline constexpr size_t kMaxEventRecord = 1 + 2 + kMaxEventBody;

namespace detail {
// Unchecked LEB128 into a buffer the caller sized; returns the end.
inline uint8_t* putVarint(uint8_t* p, uint64_t v) {
    while (v >= 0x80) {
        *p++ = static_cast<uint8_t>(v | 0x80);
        v >>= 7;
    }
    *p++ = static_cast<uint8_t>(v);
    return p;
}

inline uint8_t* putDelta(uint8_t* p, uint64_t cur, uint64_t prev) {
    const auto d = static_cast<int64_t>(cur - prev);
    return putVarint(p, (static_cast<uint64_t>(d) << 1) ^ static_cast<uint64_t>(d >> 63));
}
} // namespace detail

namespace detail {
// Which bytes of two Events differ: bit i of `lo` for byte i (0-63), bit i of `hi` for byte
// 64 + i (64-103).
struct ByteChanges {
    uint64_t lo;
    uint64_t hi;
};

#if defined(__SSE2__)
inline ByteChanges byteChanges(const uint8_t* a, const uint8_t* b) {
    auto neq = [&](int off) {
        const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + off));
        const __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + off));
        return static_cast<uint64_t>(~_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) & 0xffff);
    };
    // The last 16-byte load starts at 88 (overlapping) so as not to read past byte 103.
    return {neq(0) | neq(16) << 16 | neq(32) << 32 | neq(48) << 48,
            neq(64) | neq(80) << 16 | (neq(88) >> 8) << 32};
}
#else
inline ByteChanges byteChanges(const uint8_t* a, const uint8_t* b) {
    ByteChanges c{0, 0};
    for (int i = 0; i < 104; ++i) {
        if (a[i] != b[i]) {
            (i < 64 ? c.lo : c.hi) |= uint64_t{1} << (i & 63);
        }
    }
    return c;
}
#endif

inline uint64_t word(const uint8_t* p, int i) {
    uint64_t v;
    std::memcpy(&v, p + 8 * i, 8);
    return v;
}

// Whether two Events agree from byte 24 on (everything but time, address and size).
#if defined(__SSE2__)
inline bool sameFromWord3(const uint8_t* a, const uint8_t* b) {
    auto eq = [&](int off) {
        return _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + off)),
                              _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + off)));
    };
    const __m128i all = _mm_and_si128(_mm_and_si128(eq(24), eq(40)),
                                      _mm_and_si128(_mm_and_si128(eq(56), eq(72)), eq(88)));
    return _mm_movemask_epi8(all) == 0xffff;
}
#else
inline bool sameFromWord3(const uint8_t* a, const uint8_t* b) {
    return std::memcmp(a + 24, b + 24, 80) == 0;
}
#endif
} // namespace detail

// Writes the event body (op, mask, deltas) of the Event stored at `event` (sizeof(Event)
// bytes, any alignment) to `out`, which has room for kMaxEventBody bytes; remembers the
// event in the coder and returns the body's size. The recorder's writer thread encodes
// every event through it, so it compares the two Events' bytes at once (the detail::
// byteChanges masks) and looks at single fields only where bytes differ; the common case,
// an event that differs from the previous of its op in time, address or size only, is
// recognised by one comparison of the other 80 bytes and coded without looking further. The bytes
// are exactly what the field walk of docs/trace-format.md gives
// (tests/analyzer/decoder_test.cpp checks that against a plain implementation).
inline size_t encodeEventBodyTo(uint8_t* out, const void* event, EventCoder& coder) {
    const auto* c = static_cast<const uint8_t*>(event);
    const uint8_t op = c[offsetof(Event, op)];
    auto* p = reinterpret_cast<uint8_t*>(&coder.prev[op % kOpSlots]);
    using detail::word;
    if (detail::sameFromWord3(c, p)) [[likely]] {
        // Only time, address and size may differ: what an allocation loop changes.
        const uint64_t mask = static_cast<uint64_t>(word(c, 0) != word(p, 0)) |
                              static_cast<uint64_t>(word(c, 1) != word(p, 1)) << 1 |
                              static_cast<uint64_t>(word(c, 2) != word(p, 2)) << 2;
        uint8_t* w = detail::putVarint(out, op);
        w = detail::putVarint(w, mask);
        for (int i = 0; i < 3; ++i) {
            if (mask & (uint64_t{1} << i)) {
                w = detail::putDelta(w, word(c, i), word(p, i));
            }
        }
        std::memcpy(p, c, 3 * sizeof(uint64_t)); // the rest is equal already
        return static_cast<size_t>(w - out);
    }
    const detail::ByteChanges ch = detail::byteChanges(c, p);
    // Field bits from the bytes that changed (layout: the asserts after this function).
    auto any = [](uint64_t bits, uint64_t m, int b) {
        return static_cast<uint64_t>((bits & m) != 0) << b;
    };
    const uint64_t mask = any(ch.lo, 0xff, 0) | any(ch.lo, 0xff00, 1) | any(ch.lo, 0xff0000, 2) |
                          any(ch.lo, 0xffull << 24, 9) | any(ch.lo, 0xffull << 32, 10) |
                          any(ch.lo, 0xffull << 40, 16) | any(ch.lo, 0xffull << 48, 15) |
                          any(ch.lo, 0xffull << 56, 11) | any(ch.hi, 0xff, 12) |
                          any(ch.hi, 0xff00, 13) | any(ch.hi, 0xfull << 16, 14) |
                          any(ch.hi, 0xfull << 20, 3) | any(ch.hi, 0xfull << 24, 6) |
                          any(ch.hi, 0xfull << 28, 8) | any(ch.hi, 0x3ull << 32, 7) |
                          any(ch.hi, 0x1ull << 35, 4) | any(ch.hi, 0x1ull << 36, 5);
    uint8_t* w = detail::putVarint(out, op);
    w = detail::putVarint(w, mask);
    auto u32 = [](uint64_t v, int shift) {
        return static_cast<uint64_t>(static_cast<uint32_t>(v >> shift));
    };
    auto u8 = [](uint64_t v, int shift) { return (v >> shift) & 0xff; };
    for (uint64_t m = mask; m != 0; m &= m - 1) {
        switch (__builtin_ctzll(m)) {
        case 0:
            w = detail::putDelta(w, word(c, 0), word(p, 0));
            break;
        case 1:
            w = detail::putDelta(w, word(c, 1), word(p, 1));
            break;
        case 2:
            w = detail::putDelta(w, word(c, 2), word(p, 2));
            break;
        case 3:
            w = detail::putDelta(w, u32(word(c, 10), 32), u32(word(p, 10), 32));
            break;
        case 4:
            w = detail::putDelta(w, u8(word(c, 12), 24), u8(word(p, 12), 24));
            break;
        case 5:
            w = detail::putDelta(w, u8(word(c, 12), 32), u8(word(p, 12), 32));
            break;
        case 6:
            w = detail::putDelta(w, u32(word(c, 11), 0), u32(word(p, 11), 0));
            break;
        case 7: // device: sign-extended
            w = detail::putDelta(w, static_cast<uint64_t>(static_cast<int16_t>(word(c, 12))),
                                 static_cast<uint64_t>(static_cast<int16_t>(word(p, 12))));
            break;
        case 8: // result: sign-extended
            w = detail::putDelta(w, static_cast<uint64_t>(static_cast<int32_t>(word(c, 11) >> 32)),
                                 static_cast<uint64_t>(static_cast<int32_t>(word(p, 11) >> 32)));
            break;
        case 9:
            w = detail::putDelta(w, word(c, 3), word(p, 3));
            break;
        case 10:
            w = detail::putDelta(w, word(c, 4), word(p, 4));
            break;
        case 11:
            w = detail::putDelta(w, word(c, 7), word(p, 7));
            break;
        case 12:
            w = detail::putDelta(w, word(c, 8), word(p, 8));
            break;
        case 13:
            w = detail::putDelta(w, word(c, 9), word(p, 9));
            break;
        case 14:
            w = detail::putDelta(w, u32(word(c, 10), 0), u32(word(p, 10), 0));
            break;
        case 15:
            w = detail::putDelta(w, word(c, 6), word(p, 6));
            break;
        default: // 16
            w = detail::putDelta(w, word(c, 5), word(p, 5));
            break;
        }
    }
    std::memcpy(p, c, sizeof(Event));
    return static_cast<size_t>(w - out);
}

// The same, appended to a writer.
inline void encodeEventBody(ByteWriter& w, const Event& e, EventCoder& coder) {
    uint8_t body[kMaxEventBody];
    w.bytes(body, encodeEventBodyTo(body, &e, coder));
}

// Writes a whole event record (tag, body length, body) of the Event stored at `event` to
// `out`, which has room for kMaxEventRecord bytes; returns its size.
inline size_t encodeEventRecordTo(uint8_t* out, const void* event, EventCoder& coder) {
    out[0] = static_cast<uint8_t>(RecordTag::Event);
    size_t n = encodeEventBodyTo(out + 2, event, coder);
    if (n < 0x80) [[likely]] {
        out[1] = static_cast<uint8_t>(n);
        return 2 + n;
    }
    std::memmove(out + 3, out + 2, n);
    out[1] = static_cast<uint8_t>(n | 0x80);
    out[2] = static_cast<uint8_t>(n >> 7);
    return 3 + n;
}

namespace detail {
// The Event as 13 little-endian words, so that a decode reads and writes whole words:
// narrow field stores followed by a wide copy of the struct stall on store forwarding.
static_assert(sizeof(Event) == 13 * 8);
static_assert(offsetof(Event, actual_size) == 3 * 8);
static_assert(offsetof(Event, handle) == 4 * 8);
static_assert(offsetof(Event, stream) == 5 * 8);
static_assert(offsetof(Event, context) == 6 * 8);
static_assert(offsetof(Event, offset) == 7 * 8);
static_assert(offsetof(Event, device_free) == 8 * 8);
static_assert(offsetof(Event, device_total) == 9 * 8);
static_assert(offsetof(Event, flags) == 10 * 8);
static_assert(offsetof(Event, stack_id) == 10 * 8 + 4);
static_assert(offsetof(Event, tid) == 11 * 8);
static_assert(offsetof(Event, result) == 11 * 8 + 4);
static_assert(offsetof(Event, device) == 12 * 8);
static_assert(offsetof(Event, op) == 12 * 8 + 2);
static_assert(offsetof(Event, api) == 12 * 8 + 3);
static_assert(offsetof(Event, kind) == 12 * 8 + 4);

} // namespace detail

// Decodes an event body (op, mask, deltas) with the coder (updated): the inverse of
// encodeEventBody. Every field is the previous event's (of the same op) plus a zigzag delta,
// added with wrap-around in the field's own width. On malformed input it returns false and
// neither `out` nor the coder changes. Written for speed, since the analyzer decodes every
// event of a trace through it; tests/analyzer/decoder_test.cpp checks it against a plain
// field-by-field walk.
inline bool decodeEventBody(const uint8_t* p, const uint8_t* end, Event& out, EventCoder& coder) {
    uint64_t op = 0, mask = 0;
    if (!detail::readVarint(p, end, op) || !detail::readVarint(p, end, mask)) {
        return false;
    }
    if (op == 0 || op >= kOpSlots || mask >> kEventFields) {
        return false;
    }
    // Thirteen words in registers, loaded and stored one word at a time: a spilled array
    // copied out with 16-byte moves right after 8-byte stores stalls on store forwarding.
    auto* prev = reinterpret_cast<unsigned char*>(&coder.prev[op]);
    auto load = [prev](int i) {
        uint64_t x;
        std::memcpy(&x, prev + 8 * i, 8);
        return x;
    };
    uint64_t w0 = load(0), w1 = load(1), w2 = load(2), w3 = load(3), w4 = load(4), w5 = load(5),
             w6 = load(6), w7 = load(7), w8 = load(8), w9 = load(9), w10 = load(10), w11 = load(11),
             w12 = load(12);
    // Fields in mask-bit order (the order the deltas are stored); a repeating mask
    // predicts well, and nothing is touched for absent fields.
    uint64_t v = 0;
#define GMT_FIELD(bit, stmt)                                                                       \
    if (mask & (uint64_t{1} << bit)) {                                                             \
        if (!detail::readVarint(p, end, v)) {                                                      \
            return false;                                                                          \
        }                                                                                          \
        v = detail::unzigzag(v);                                                                   \
        stmt;                                                                                      \
    }
    uint64_t d3 = 0, d4 = 0, d5 = 0, d6 = 0, d7 = 0, d8 = 0, d14 = 0;
    GMT_FIELD(0, w0 += v) // time_ns
    GMT_FIELD(1, w1 += v) // address
    GMT_FIELD(2, w2 += v) // size
    GMT_FIELD(3, d3 = v)  // stack_id
    if (mask < 16) [[likely]] {
        // What an allocation loop changes (time, address, size, stack), nothing else: the
        // other words are the previous event's, and only the changed ones go back to it.
        w10 = (w10 & 0xffffffffull) | static_cast<uint64_t>(static_cast<uint32_t>((w10 >> 32) + d3))
                                          << 32;
        w12 = (w12 & ~0xff0000ull) | op << 16;
        auto* o = reinterpret_cast<unsigned char*>(&out);
        auto put = [](unsigned char* to, int i, uint64_t x) { std::memcpy(to + 8 * i, &x, 8); };
        put(o, 0, w0);
        put(o, 1, w1);
        put(o, 2, w2);
        put(o, 3, w3);
        put(o, 4, w4);
        put(o, 5, w5);
        put(o, 6, w6);
        put(o, 7, w7);
        put(o, 8, w8);
        put(o, 9, w9);
        put(o, 10, w10);
        put(o, 11, w11);
        put(o, 12, w12);
        put(prev, 0, w0);
        put(prev, 1, w1);
        put(prev, 2, w2);
        put(prev, 10, w10);
        put(prev, 12, w12);
        return true;
    }
    GMT_FIELD(4, d4 = v)   // api
    GMT_FIELD(5, d5 = v)   // kind
    GMT_FIELD(6, d6 = v)   // tid
    GMT_FIELD(7, d7 = v)   // device
    GMT_FIELD(8, d8 = v)   // result
    GMT_FIELD(9, w3 += v)  // actual_size
    GMT_FIELD(10, w4 += v) // handle
    GMT_FIELD(11, w7 += v) // offset
    GMT_FIELD(12, w8 += v) // device_free
    GMT_FIELD(13, w9 += v) // device_total
    GMT_FIELD(14, d14 = v) // flags
    GMT_FIELD(15, w6 += v) // context
    GMT_FIELD(16, w5 += v) // stream
#undef GMT_FIELD
    const uint64_t flags = static_cast<uint32_t>(w10 + d14);
    const uint64_t stack = static_cast<uint32_t>((w10 >> 32) + d3);
    w10 = flags | stack << 32;
    const uint64_t tid = static_cast<uint32_t>(w11 + d6);
    const uint64_t result = static_cast<uint32_t>((w11 >> 32) + d8);
    w11 = tid | result << 32;
    const uint64_t device = static_cast<uint16_t>(w12 + d7);
    const uint64_t api = static_cast<uint8_t>((w12 >> 24) + d4);
    const uint64_t kind = static_cast<uint8_t>((w12 >> 32) + d5);
    w12 = (w12 & 0xffffff0000000000ull) | kind << 32 | api << 24 | op << 16 | device;
    auto* o = reinterpret_cast<unsigned char*>(&out);
    auto store = [prev, o](int i, uint64_t x) {
        std::memcpy(prev + 8 * i, &x, 8);
        std::memcpy(o + 8 * i, &x, 8);
    };
    store(0, w0);
    store(1, w1);
    store(2, w2);
    store(3, w3);
    store(4, w4);
    store(5, w5);
    store(6, w6);
    store(7, w7);
    store(8, w8);
    store(9, w9);
    store(10, w10);
    store(11, w11);
    store(12, w12);
    return true;
}

inline bool decodeEventBody(ByteReader& r, Event& out, EventCoder& coder) {
    auto body = r.bytes(r.remaining());
    return decodeEventBody(body.data(), body.data() + body.size(), out, coder);
}

// ---------------------------------------------------------------------------------
// Non-event record bodies. Each encode writes the body only; see appendRecord for framing.

// The Header's rank block (see HeaderInfo), in its own functions so that later blocks
// append after it without touching it. A trace written before the block existed ends
// where it would start: the fields keep their "not known" values.
inline void encodeHeaderRank(ByteWriter& w, const HeaderInfo& h) {
    w.svarint(h.rank);
    w.svarint(h.local_rank);
    w.svarint(h.world_size);
    w.string(h.rank_source);
}

inline void decodeHeaderRank(ByteReader& r, HeaderInfo& h) {
    if (!r.ok() || r.atEnd()) {
        return;
    }
    h.rank = static_cast<int32_t>(r.svarint());
    h.local_rank = static_cast<int32_t>(r.svarint());
    h.world_size = static_cast<int32_t>(r.svarint());
    h.rank_source = r.string(256);
}

inline void encodeHeaderPython(ByteWriter& w, const HeaderInfo& h) {
    w.varint(h.python_version);
    w.varint(static_cast<uint8_t>(h.python_status));
}

// After the rank block, and only when the writer appended it. A status this reader does
// not know stays as written: pythonStatusName() calls it not_detected.
inline void decodeHeaderPython(ByteReader& r, HeaderInfo& h) {
    if (!r.ok() || r.atEnd()) {
        return;
    }
    h.python_version = static_cast<uint32_t>(r.varint());
    h.python_status = static_cast<PythonStatus>(r.varint());
}

inline void encodeHeader(ByteWriter& w, const HeaderInfo& h) {
    w.varint(h.pid);
    w.varint(h.ppid);
    w.varint(h.start_wall_ns);
    w.varint(h.start_mono_ns);
    w.svarint(h.driver_version);
    w.varint(h.stack_depth);
    w.varint(h.granularity);
    w.string(h.command);
    w.string(h.executable);
    w.string(h.host);
    w.string(h.tracer_version);
    encodeHeaderRank(w, h);
    encodeHeaderPython(w, h);
}

inline bool decodeHeader(ByteReader& r, HeaderInfo& h) {
    h.pid = static_cast<uint32_t>(r.varint());
    h.ppid = static_cast<uint32_t>(r.varint());
    h.start_wall_ns = r.varint();
    h.start_mono_ns = r.varint();
    h.driver_version = static_cast<int32_t>(r.svarint());
    h.stack_depth = static_cast<uint32_t>(r.varint());
    h.granularity = r.varint();
    h.command = r.string();
    h.executable = r.string();
    h.host = r.string();
    h.tracer_version = r.string();
    decodeHeaderRank(r, h);
    decodeHeaderPython(r, h);
    return r.ok();
}

inline void encodeDevice(ByteWriter& w, const DeviceInfo& d) {
    w.svarint(d.ordinal);
    w.varint(d.total_bytes);
    w.varint(d.granularity);
    w.string(d.name);
}

inline bool decodeDevice(ByteReader& r, DeviceInfo& d) {
    d.ordinal = static_cast<int32_t>(r.svarint());
    d.total_bytes = r.varint();
    d.granularity = r.varint();
    d.name = r.string();
    return r.ok();
}

inline void encodeModule(ByteWriter& w, const ModuleInfo& m) {
    w.varint(m.base);
    w.varint(m.start);
    w.varint(m.end);
    w.string(m.path);
    w.string(m.build_id);
}

inline bool decodeModule(ByteReader& r, ModuleInfo& m) {
    m.base = r.varint();
    m.start = r.varint();
    m.end = r.varint();
    m.path = r.string();
    m.build_id = r.string(256);
    return r.ok();
}

// Frames are delta-coded against the previous frame (callers are neighbours in code).
// Python frames, when there are any, follow as an appended section.
inline void encodeStack(ByteWriter& w, uint32_t id, const uint64_t* frames, uint32_t depth,
                        const PythonFrame* python = nullptr, uint32_t python_depth = 0) {
    w.varint(id);
    w.varint(depth);
    uint64_t prev = 0;
    for (uint32_t i = 0; i < depth; ++i) {
        w.svarint(static_cast<int64_t>(frames[i] - prev));
        prev = frames[i];
    }
    if (python_depth > 0) {
        w.varint(python_depth);
        for (uint32_t i = 0; i < python_depth; ++i) {
            w.varint(python[i].code_id);
            w.varint(python[i].instruction);
            w.varint(python[i].position);
        }
    }
}

inline bool decodeStack(ByteReader& r, StackInfo& s) {
    s.id = static_cast<uint32_t>(r.varint());
    uint64_t depth = r.varint();
    if (!r.ok() || depth > kMaxStackDepth) {
        return false;
    }
    s.depth = static_cast<uint32_t>(depth);
    uint64_t prev = 0;
    for (uint32_t i = 0; i < s.depth; ++i) {
        prev += static_cast<uint64_t>(r.svarint());
        s.frames[i] = prev;
    }
    s.python_depth = 0;
    if (r.ok() && !r.atEnd()) {
        uint64_t n = r.varint();
        if (!r.ok() || n > kMaxPythonDepth) {
            return false;
        }
        s.python_depth = static_cast<uint32_t>(n);
        for (uint32_t i = 0; i < s.python_depth; ++i) {
            s.python[i].code_id = static_cast<uint32_t>(r.varint());
            s.python[i].instruction = static_cast<uint32_t>(r.varint());
            uint64_t position = r.varint();
            s.python[i].position = static_cast<uint32_t>(std::min<uint64_t>(position, s.depth));
        }
    }
    return r.ok();
}

inline void encodePythonCode(ByteWriter& w, const PythonCodeInfo& c) {
    w.varint(c.id);
    w.varint(static_cast<uint8_t>(c.table_format));
    w.svarint(c.first_line);
    w.string(c.filename);
    w.string(c.name);
    w.string(c.line_table);
}

inline bool decodePythonCode(ByteReader& r, PythonCodeInfo& c) {
    c.id = static_cast<uint32_t>(r.varint());
    c.table_format = static_cast<PythonLineTable>(r.varint());
    c.first_line = static_cast<int32_t>(r.svarint());
    c.filename = r.string(kMaxPythonFilename);
    c.name = r.string(kMaxPythonName);
    c.line_table = r.string(kMaxPythonLineTable);
    return r.ok();
}

inline void encodeTrailer(ByteWriter& w, const TrailerInfo& t) {
    w.varint(t.events);
    w.varint(t.dropped_events);
    w.varint(t.end_mono_ns);
    w.varint(t.end_wall_ns);
    w.svarint(t.exit_signal);
    w.varint(t.in_flight);
    w.varint(static_cast<uint8_t>(t.python_status));
}

inline bool decodeTrailer(ByteReader& r, TrailerInfo& t) {
    t.events = r.varint();
    t.dropped_events = r.varint();
    t.end_mono_ns = r.varint();
    t.end_wall_ns = r.varint();
    t.exit_signal = r.atEnd() ? 0 : static_cast<int32_t>(r.svarint());
    t.in_flight = r.atEnd() ? 0 : r.varint();
    t.python_status = r.atEnd() ? PythonStatus::NotDetected : static_cast<PythonStatus>(r.varint());
    return r.ok();
}

inline void encodePhase(ByteWriter& w, const PhaseInfo& p) {
    w.varint(p.time_ns);
    w.string(p.name);
    w.varint(static_cast<uint8_t>(p.kind));
    w.varint(p.tid);
}

inline bool decodePhase(ByteReader& r, PhaseInfo& p) {
    p.time_ns = r.varint();
    p.name = r.string(4096);
    p.kind = PhaseKind::Mark;
    p.tid = 0;
    if (!r.atEnd()) {
        const uint64_t kind = r.varint();
        // An unknown kind (a newer recorder) reads as a mark: its name still counts.
        p.kind = kind <= static_cast<uint8_t>(PhaseKind::Pop) ? static_cast<PhaseKind>(kind)
                                                              : PhaseKind::Mark;
        p.tid = static_cast<uint32_t>(r.varint());
    }
    return r.ok();
}

inline void encodeCachingAllocator(ByteWriter& w, const CachingAllocatorInfo& c) {
    w.varint(static_cast<uint8_t>(c.source));
    w.varint(static_cast<uint8_t>(c.status));
    w.varint(c.time_ns);
    w.string(c.version);
    w.string(c.detail);
    w.string(c.config);
}

inline bool decodeCachingAllocator(ByteReader& r, CachingAllocatorInfo& c) {
    c.source = static_cast<BlockSource>(r.varint());
    c.status = static_cast<CachingAllocatorStatus>(r.varint());
    c.time_ns = r.varint();
    c.version = r.string(256);
    c.detail = r.string(1024);
    c.config = r.string(kMaxCachingAllocatorConfig);
    return r.ok();
}

// Frames a record: tag, body length, body. `body` is a scratch writer the caller filled.
inline void appendRecord(ByteWriter& out, RecordTag tag, const uint8_t* body, size_t size) {
    out.byte(static_cast<uint8_t>(tag));
    out.varint(size);
    out.bytes(body, size);
}

inline uint32_t frameChecksum(const FrameHeader& h, const uint8_t* payload) {
    uint32_t crc =
        crc32c(&h.payload_size, sizeof(FrameHeader) - offsetof(FrameHeader, payload_size));
    return crc32c(payload, h.payload_size, crc);
}

inline uint32_t prologueChecksum(const Prologue& p) {
    return crc32c(&p, kPrologueChecksummedBytes);
}

} // namespace gmt::format
