// The records other than events that a trace carries (header, devices, modules, stacks,
// Python code objects, trailer, phases, caching allocators): their tags and the values
// both halves exchange. Their bytes are in record_codec.h; docs/trace-format.md, Records.
#pragma once

#include <gpumemtrace/format/event.h>
#include <gpumemtrace/format/record_limits.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace gmt::format {

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
    AggregateSummary = 10, // an aggregated trace's checkpoint: see format/aggregate.h
    SiteTotals = 11,       // folded allocations of one site: see format/aggregate.h
    PhaseTotals = 12,      // folded allocations and frees between phases: format/aggregate.h
    Recording = 13,  // recording paused or resumed (GPUMEMTRACE_START, `control`): RecordingInfo
    FoldedPeak = 14, // folded allocations' live bytes at a stretch's peak: format/aggregate.h
    FoldedMark = 15, // their changes since the last Phase record: format/aggregate.h
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

    // --- Command block: appended after the Python block; absent in older traces -------
    // The whole command line's length in bytes. `command` keeps at most kMaxHeaderCommand
    // of them (a header must fit one log frame, and a command line may be megabytes);
    // longer than `command`: cut there. 0: not known (an older trace), read as whole.
    uint64_t command_bytes = 0;
    // --- end of the command block ---------------------------------------------------

    bool commandTruncated() const { return command_bytes > command.size(); }
};
// The most of a command line a Header keeps (HeaderInfo::command_bytes has its length).
inline constexpr uint32_t kMaxHeaderCommand = 16 * 1024;

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

// What a Recording record says (RecordTag::Recording). Append only.
enum class RecordingChange : uint8_t {
    Pause = 0,  // from here on calls are not recorded
    Resume = 1, // from here on they are again
};
// Why it changed.
enum class RecordingCause : uint8_t {
    Start = 0,   // GPUMEMTRACE_START=paused: the trace began paused
    Control = 1, // `gpumemtrace control` flipped the prologue's control word
};

inline std::string_view recordingChangeName(RecordingChange c) {
    return c == RecordingChange::Resume ? "resume" : "pause";
}
inline std::string_view recordingCauseName(RecordingCause c) {
    return c == RecordingCause::Start ? "start" : "control";
}

struct RecordingInfo {
    uint64_t time_ns = 0; // when the recorder saw the change (the first call after it)
    RecordingChange change = RecordingChange::Pause;
    RecordingCause cause = RecordingCause::Control;
};

} // namespace gmt::format
