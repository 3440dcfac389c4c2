// The event: one recorded call, the record both halves agree on, with the enumerations
// its fields take (ops, APIs, kinds, caching-allocator actions, flags) and their names.
// Its fixed 104-byte layout is what a ring slot holds; the log delta-codes it
// (event_codec.h). Values are part of the format: append only.
#pragma once

#include <cstdint>
#include <string_view>

namespace gmt::format {

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
// Block (alloc), in an aggregated trace only: actual_size is the block's size as the
// recorder rebuilt it (format/allocator_rules.h) while the blocks around it, which that size
// depends on, were all known; the trace may have folded some of them away since.
inline constexpr uint32_t kFlagBlockSized = 1u << 27;
// Block (alloc) with kFlagBlockSized: that size is an estimate (the analysis counts it so).
inline constexpr uint32_t kFlagBlockEstimated = 1u << 26;
inline constexpr uint32_t kBlockSourceMask = 0xff; // Block: the BlockSource

// One recorded call. This is the logical event both halves agree on; in the ring it is
// stored as is (fixed layout), in the log it is delta-encoded (event_codec.h).
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
//                   device_free = free bytes (Oom); actual_size = the block's size with
//                   kFlagBlockSized (aggregated traces)
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

} // namespace gmt::format
