// What a phase left behind, counted by the recorder itself, so that a test harness can have
// a test's verdict without reading the trace (gpumemtrace_account_phases and
// gpumemtrace_last_phase_account in include/gpumemtrace.h; the pytest plugin, docs/ci.md).
//
// The counting runs where the trace is put in order: the log writer (log_writer.h) hands it
// every record it drains, in ring order, which is the order the analyzer reads them in. So a
// phase here holds exactly the records the analyzer places between its push and its pop, of
// every thread, with the outcome of every free (committed after the call returned), and
// nothing is added to any traced call: the writer calls onEvent only while a phase is open.
//
// A phase is accounted when a thread that asked for it (accountThread) pushes one with
// none open; its nested pushes and pops are followed to the pop that closes it. Meanwhile:
//
//   * a device allocation (Op::Alloc of kind Device, or of no kind, or Managed: the kinds
//     the analyzer counts as the process's device memory, analysis/lifetimes.cpp) is kept
//     in an address -> (size, stack) map, and a free found there leaves it; a free of
//     anything else is a free of memory allocated before the phase (kFreedBefore);
//   * the live bytes of the map are the device memory the phase added: their highest value
//     is the phase's peak increase as analysis/phase_tracker.h measures it (the process's
//     live device memory above its level at the push), as long as nothing allocated before
//     the phase was freed in it (which lowers the level by bytes not known here);
//   * per allocation stack, the different levels its live bytes from the phase took. The
//     growth analysis (analysis/growth_tracker.h) gives a site to this phase only when an
//     allocation of the phase made it grow, and then only when its live bytes were higher
//     at three iteration boundaries, each above the one before; the site's live bytes from
//     before the phase can only fall meanwhile (every allocation in the window is the
//     phase's), so its bytes from the phase must take three different levels above zero.
//     Fewer: no growth (kMayGrow).
//
// A caching allocator's block events (PyTorch's tensors, docs/frameworks.md) are followed
// as analysis/caching/block_tracker.h follows them, from the moment a thread asked for
// accounting on, in and between phases, so that the blocks are where the analyzer has them:
//
//   * its segments (segment_alloc to segment_free) and the blocks in them, each block's
//     size rebuilt with the rules both sides share (format/allocator_rules.h) from the free
//     block it was carved from;
//   * a block handed out in the phase and still allocated at the pop is a leaked tensor
//     (live_blocks); its bytes are a site of the growth rule above, as the analyzer's block
//     sites are (analysis/growth_analysis.cpp);
//   * a device allocation of the phase that a segment_alloc names (same address and size)
//     is the allocator's segment: still live at the pop, it is its cache (cached_*), which
//     `check` counts as held, not leaked (its stack is the allocator's caching path,
//     analysis/caching/caching_allocators.cpp). The peak increase stays the segment level,
//     as the analyzer measures it.
//
// Whatever the counting does not follow makes the figures unsettled (a flag, never a guess):
// other kinds of events (arrays, pools, host memory, VMM, device resets), block events it
// cannot place exactly (kBlocksInexact: an estimated size, expandable segments, an OOM,
// unmatched events, a segment from before the accounting began), another thread's phase
// records (the analyzer's current phase would be that thread's), a pause, more live
// allocations than kMaxLive or memory to keep them. The caller then asks the analyzer
// (`gpumemtrace check`). Drops are counted by the pushing thread (they take no ring
// position, so the writer cannot see them): ThreadSide.
#pragma once

#include <gpumemtrace/format/allocator_rules.h>
#include <gpumemtrace/format/event.h>
#include <gpumemtrace/format/records.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>

namespace gmt::preload {

// The figures of one accounted phase (struct gpumemtrace_phase_account, gpumemtrace.h).
struct PhaseAccount {
    uint64_t unsettled = 0; // kOtherEvents | ...: why the figures may not be the analyzer's
    uint64_t allocations = 0;
    uint64_t frees = 0; // of the phase's own allocations
    uint64_t live_allocations = 0;
    uint64_t live_bytes = 0;
    uint64_t peak_increase_bytes = 0;
    uint64_t block_allocations = 0;
    uint64_t block_frees = 0; // of the phase's own blocks
    uint64_t live_blocks = 0;
    uint64_t live_block_bytes = 0;
    uint64_t cached_allocations = 0; // of live_allocations: segments the allocator holds
    uint64_t cached_bytes = 0;
};

namespace account_flags {
inline constexpr uint64_t kOtherEvents = 1;
inline constexpr uint64_t kFreedBefore = 2;
inline constexpr uint64_t kMayGrow = 4;
inline constexpr uint64_t kOtherPhases = 8;
inline constexpr uint64_t kDropped = 16;
inline constexpr uint64_t kPaused = 32;
inline constexpr uint64_t kOverflow = 64;
inline constexpr uint64_t kBlocks = 128;
inline constexpr uint64_t kBlocksInexact = 256;
} // namespace account_flags

// The writer's side: fed in ring order under the log writer's lock; take() from any thread.
class PhaseAccounting {
  public:
    // Live allocations of a phase (and allocation stacks) kept at most; past it, kOverflow.
    static constexpr size_t kMaxLive = 1 << 16;

    bool open() const { return open_; }
    // Whether the writer hands events to onEvent: while a phase is open, and once a thread
    // asked for accounting, every event (block events place the blocks of later phases).
    bool wantsEvents() const;
    // A framed Phase, Recording or CachingAllocator record (tag, length, body) at ring
    // position `pos`; other records are ignored.
    void onRecord(uint64_t pos, const uint8_t* record, uint32_t length) noexcept;
    // An event, when wantsEvents().
    // Neither throws (they run inside a drain of the ring, in the traced program's process:
    // out_of_memory.h). Out of host memory, the open phase's figures are unsettled
    // (kOverflow) and the caching allocator's layout is no longer followed.
    void onEvent(const format::Event& e) noexcept;
    // The figures of the accounted phase whose pop took ring position `pop`, once the
    // writer has drained it; false before, or when that pop closed no accounted phase.
    bool take(uint64_t pop, PhaseAccount& out);

  private:
    struct Live {
        uint64_t size;
        uint32_t stack;
        bool segment = false; // a segment_alloc named it: the caching allocator's
    };
    // A block as BlockTracker keeps it: from its alloc to its free_completed.
    struct Block {
        uint64_t end = 0; // address + the block's size
        uint32_t stack = 0;
        uint64_t phase = 0;    // the accounted phase that handed it out (serial_), 0: none
        bool allocated = true; // false: freed, waiting for its streams
    };
    struct Device {
        std::map<uint64_t, uint64_t> segments; // start -> end, known since accounting began
        std::map<uint64_t, Block> blocks;
    };
    // The live bytes of the phase's allocations at one stack, and the levels above zero
    // they took (two kept: a third different one is kMayGrow).
    struct Site {
        uint64_t live = 0;
        uint64_t levels[2] = {0, 0};
        uint8_t count = 0;
    };
    void readRecord(uint64_t pos, const uint8_t* record, uint32_t length);
    void followEvent(const format::Event& e);
    void outOfMemory() noexcept;
    void onPhase(uint64_t pos, const format::PhaseInfo& p);
    void level(Site& site);
    void onDeviceEvent(const format::Event& e);
    void onBlock(const format::Event& e);
    void blockAlloc(Device& d, const format::Event& e);
    void freeRequested(Device& d, const format::Event& e);
    void segmentFree(Device& d, const format::Event& e);
    // The block stops being allocated (its charge leaves its site), then, unless `keep`,
    // leaves the layout.
    void endBlock(Device& d, std::map<uint64_t, Block>::iterator it, bool keep);
    // What the analyzer places in a way the counting does not follow exactly.
    void inexact() { now_.unsettled |= open_ ? account_flags::kBlocksInexact : 0; }
    // Growth sites: device allocations by stack, blocks by stack above them (the analyzer
    // keeps the two levels' sites apart).
    static uint64_t blockSite(uint32_t stack) { return uint64_t{1} << 32 | stack; }

    bool open_ = false;
    uint32_t tid_ = 0;
    uint32_t depth_ = 0;
    PhaseAccount now_;
    std::unordered_map<uint64_t, Live> live_; // by address
    std::unordered_map<uint64_t, Site> sites_;
    // The caching allocator's layout, kept across phases; `layout_broken_`: it may differ
    // from the analyzer's from now on (expandable segments, more blocks than kMaxLive), so
    // no block event settles a phase any more.
    format::AllocatorRules rules_;
    std::map<int, Device> devices_;
    size_t blocks_ = 0;
    uint64_t serial_ = 0; // accounted phases opened
    bool layout_broken_ = false;

    std::mutex result_mutex_;
    bool has_result_ = false;
    uint64_t result_pop_ = 0;
    PhaseAccount result_;
};

namespace phase_accounting {

// The calling thread's pushes are accounted from now on (one thread per process: the last
// to ask).
void accountThread(uint32_t tid);
uint32_t accountedThread();

// The pushing thread's side: a Phase record of thread `tid`, which took ring positions from
// `first` (`recorded` false: it could not be recorded); the drop count read before its
// claim and after it.
void claimed(format::PhaseKind kind, uint32_t tid, bool recorded, uint64_t first,
             uint64_t dropped_before, uint64_t dropped_after);
// This thread's last pop that closed an accounted phase, if its last Phase record was that
// pop and every record of the phase's own pushes and pops was recorded: the pop's position
// and the events dropped between the push and it.
bool lastPop(uint64_t& pop, uint64_t& dropped);
// A forked child's thread has no phase open.
void resetThread();

} // namespace phase_accounting
} // namespace gmt::preload
