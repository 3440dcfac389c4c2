// The writer thread's fold of events for an aggregated trace (GPUMEMTRACE_MODE=aggregate,
// format/aggregate.h): instead of logging every event it keeps only those the analysis
// needs to give the same leaks, peak and growth as a full trace of the run, and counts the
// rest per site.
//
// Why a subset is enough: the analysis replays events in order. An allocation that was
// freed and was alive at none of the moments the report describes (a peak, a phase mark, a
// failure) changes nothing the report shows of those moments, nor of the end (it is not a
// leak); live bytes of a subset never exceed the real ones, so when every allocation alive
// at the peak moment is kept, the subset replays to the same peak at the same moment. So:
//   - an allocation still live is kept (a leak, if it stays so);
//   - a freed one is kept, with its free, when it was alive at the current peak of one of
//     its scopes (the process's device-resident total, its device, its kind) or at a pin
//     (a failure: its live bytes); a later higher peak lets it go;
//   - a caching allocator's blocks (Op::Block) the same way at the tensor level: the
//     aggregator rebuilds each block's size as the analysis does (format/allocator_rules.h)
//     from the segments and blocks alive then, so it knows the tensor-level peaks (the
//     process's, each device's) and the segment-level one (each device's reserved bytes);
//     a block is kept, from its alloc to its free_completed, when it was in its segment at
//     one of those, at a pin, or at the moment the analysis measures the space inside the
//     segments after the tensor peak (the next end of a block or segment); a segment
//     (segment_alloc to segment_free) likewise; a kept block carries its rebuilt size
//     (kFlagBlockSized), since the neighbours it was carved between may be folded. A
//     caching allocator's out-of-memory pins everything from the device's last block
//     alloc before it (what it had released since). Damaged sequences (a block given
//     twice, a free the mirror cannot place, a segment freed with blocks in it) are kept
//     whole, as are expandable segments' maps and unmaps: from the first one on, no block
//     is folded any more (their joined ranges are not mirrored here);
//   - every other event (failures, frees of unknown addresses, VMM, pools, teardown)
//     is kept as it is; errors past format::kMaxKeptErrors are only counted;
//   - what is let go is counted per site (format::SiteTotals) and per stretch between
//     phase marks (format::PhaseTotals); of the stretches, the one whose peak rose most
//     above the live bytes at its Phase record (the most a phase's occurrence needed: what
//     `check --max-peak-increase` lists) is held like a peak, as is the current stretch's
//     while it rises more than that.
// Phase records and the peaks of the stretches between them keep nothing: what the folded
// allocations held there is written instead (format::FoldedMark before a Phase record:
// their live bytes and each stack's, as changes since the record before; format::FoldedPeak
// at a stretch's peak: their live bytes), so a program that marks every request keeps what
// a program that marks none keeps, plus O(1) per mark. What they held at a moment is known
// only once each is folded (at its free, or when a higher peak lets it go), so the sums
// are kept as differences over the marks and the stretch peaks: folding adds its bytes at
// the first moment it was alive at and takes them off at the first after its free.
// Growth (analyzer/analysis/growth_analysis.cpp) and the phases' peaks and levels
// (analyzer/analysis/phase_tracker.h) add them to what they replay.
// Runs on the writer thread only (under the log writer's lock), never on the application's
// threads.
#pragma once

#include <gpumemtrace/format/aggregate.h>
#include <gpumemtrace/format/allocator_rules.h>
#include <gpumemtrace/format/event.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace gmt::preload {

class Aggregator {
  public:
    // `region_bytes`: one checkpoint region, header included.
    explicit Aggregator(uint64_t region_bytes) : region_bytes_(region_bytes) {}

    // The entry points below never throw. Out of host memory (std::bad_alloc from any of
    // its tables) one returns false: the aggregator gives back what it held and folds
    // nothing more, and the log writer stops the trace, which says why. An exception may
    // not leave a drain of the ring (the writer thread's, or an application thread's that
    // waits for room): the recorder is built without exceptions, so it would end the traced
    // program (std::terminate). This file is compiled with them (out_of_memory.h).

    // The event at ring position `pos` (positions only increase).
    [[nodiscard]] bool onEvent(uint64_t pos, const format::Event& e) noexcept;
    // A Phase record (framed: tag, length, body) at ring position `pos`.
    [[nodiscard]] bool onPhase(uint64_t pos, const uint8_t* record, uint32_t length) noexcept;
    // A CachingAllocator record (framed): the settings its block sizes follow.
    [[nodiscard]] bool onCachingAllocator(const uint8_t* record, uint32_t length) noexcept;
    // The trailer (framed record, at most kMaxTrailer bytes) that ends the next checkpoint.
    // Copied into a fixed buffer: a fatal signal's handler may call it.
    static constexpr size_t kMaxTrailer = 128;
    void setTrailer(const uint8_t* record, size_t length) noexcept {
        trailer_size_ = std::min(length, kMaxTrailer);
        std::copy(record, record + trailer_size_, trailer_);
    }
    void clearTrailer() noexcept { trailer_size_ = 0; }

    // Checkpoint `sequence` into `out`: `header` zero bytes for the caller's header, then
    // the payload, at most `capacity` bytes; `records`: its record count. What does not fit
    // is counted in the summary (over_budget).
    [[nodiscard]] bool encode(uint64_t sequence, uint64_t capacity, size_t header,
                              std::vector<uint8_t>& out, uint32_t& records) noexcept;

    uint64_t events() const { return summary_.events; }

  private:
    // Runs `body`; false when it ran out of memory (then everything is given back).
    template <typename Body> bool guarded(Body&& body) noexcept;
    void release() noexcept;
    void addEvent(uint64_t pos, const format::Event& e);
    void addPhase(uint64_t pos, const uint8_t* record, uint32_t length);
    void readAllocatorRules(const uint8_t* record, uint32_t length);
    uint32_t encodeCheckpoint(uint64_t sequence, uint64_t capacity, std::vector<uint8_t>& out);

    struct Entry {
        uint64_t pos = 0;
        format::Event event;
    };
    struct Holder {
        Entry alloc;
        Entry free;
    };
    struct Scope {
        uint64_t live = 0;
        uint64_t peak = 0;
        uint64_t peak_pos = 0;
        // Up to when the peak's live set lasts for the analysis: the block peak's space is
        // measured at the next end (BlockTracker's gate); UINT64_MAX: not yet.
        uint64_t settle_pos = 0;
    };
    // Scope keys: the resident total, a device, a kind; the tensor level's total and
    // devices, the segment level's devices.
    static constexpr int kTotal = 0, kKindBase = 1, kDeviceBase = 64;
    static constexpr int kBlockTotal = -1, kBlockDeviceBase = -100000,
                         kReservedDeviceBase = -200000;

    // A caching allocator's block as the aggregator mirrors it (BlockTracker's).
    struct Block {
        uint64_t end = 0;
        Entry alloc; // kFlagBlockSized, actual_size: its size
        Entry free_requested;
        Entry free_completed;
        bool allocated = true;
        bool damaged = false; // kept whole
        int device = 0;
    };
    struct Segment {
        uint64_t end = 0;
        Entry alloc;
        Entry free;
        bool keep = false; // a block kept whole lay in it
    };
    struct BlockDevice {
        std::map<uint64_t, Segment> segments; // not expandable
        std::map<uint64_t, Block> blocks;
        uint64_t last_alloc_pos = 0;
    };
    // The caching allocator's OOMs whose space the analysis measures (as many as
    // BlockTracker keeps, analyzer/analysis/caching/block_tracker.h).
    static constexpr size_t kMaxMeasuredOoms = 100;
    struct Range {
        uint64_t from = 0, to = 0;
    };

    void onBlock(uint64_t pos, const format::Event& e);
    void blockAlloc(uint64_t pos, const format::Event& e, BlockDevice& d);
    void endBlock(BlockDevice& d, std::map<uint64_t, Block>::iterator it, uint64_t pos);
    void chargeBlock(int key, uint64_t bytes, uint64_t pos, bool added);
    void gateBlocks(uint64_t pos);
    // Whether [from, to) of a block or segment holds a moment the analysis describes, or
    // may yet (an OOM would pin the moments since the device's last block alloc).
    bool blockRelevant(uint64_t from, uint64_t to, int device) const;
    void foldBlock(const Block& b);
    void keepBlock(BlockDevice& d, const Block& b);
    void maybePrune();

    // Keeps `e` whole; false when it is an error past the bound (then only counted).
    bool keep(uint64_t pos, const format::Event& e, bool error);
    void pin(uint64_t pos) { pins_.push_back(pos); }
    void charge(const format::Event& alloc, uint64_t pos, bool added);
    bool relevant(uint64_t alloc_pos, uint64_t free_pos, const format::Event& alloc) const;
    // Counts an allocation made at `alloc_pos` and freed at `free_pos` in its site's and
    // its phases' totals.
    void fold(const format::Event& alloc, uint64_t alloc_pos, uint64_t free_pos);
    // What a folded allocation (or block: `level` false, only its stack's live bytes) held
    // from `from` to `to`: added to the Phase records and the stretch peaks in between.
    void foldSpan(uint32_t stack, uint64_t bytes, uint64_t from, uint64_t to, bool level);
    // The FoldedMark and FoldedPeak records, framed, into folded_records_, with their keys.
    void encodeFolded(std::vector<std::pair<uint64_t, size_t>>& keyed);
    // The segment (index into phases_) that `pos` lies in; -1 before the first phase.
    long segmentOf(uint64_t pos) const;
    void pruneHolders();
    Scope& scope(int key) { return scopes_[key]; }

    uint64_t region_bytes_;
    format::AggregateSummary summary_;
    std::unordered_map<uint64_t, Entry> live_; // by address
    std::vector<Holder> holders_;
    size_t holders_after_prune_ = 0;
    std::vector<Entry> kept_;
    std::vector<std::pair<uint64_t, std::vector<uint8_t>>> phases_;
    // What was folded in each segment from one kept phase record to the next (parallel
    // to phases_), and the moment of most live bytes in the current one: per-phase counts
    // and peaks (analyzer/analysis/phase_tracker.h) come out as in a full trace.
    std::vector<format::PhaseTotals> segments_;
    Scope segment_;
    uint64_t segment_peak_time_ = 0; // the event's at segment_.peak_pos
    // The peaks of the stretches that ended (stretch i: from phases_[i] to phases_[i + 1]).
    struct StretchPeak {
        uint64_t pos = 0;
        uint64_t after_ns = 0; // its event's time after the stretch's Phase record's
    };
    uint64_t stretch_start_ns_ = 0;   // the current stretch's Phase record's time
    uint64_t stretch_start_live_ = 0; // segment_.live at it
    // The stretch peak that rose most above the live bytes at its Phase record, kept like a
    // peak: `check --max-peak-increase` lists what held it (analyzer/cli/check_command.cpp).
    uint64_t best_rise_ = 0;
    uint64_t rise_pos_ = UINT64_MAX; // none yet
    // Whether the current stretch's peak rose more than every stretch before: then what is
    // alive at it is held (it may become the one), else folded like the rest.
    bool risesMost() const {
        return segment_.peak - std::min(segment_.peak, stretch_start_live_) > best_rise_;
    }
    // What allocations folded so far held at the current stretch's peak.
    int64_t running_peak_folded_ = 0;
    std::vector<StretchPeak> stretch_peaks_;
    // What folded allocations held at each stretch peak, as differences: the sum of
    // peak_diff_[0..k] is what they held at stretch_peaks_[k] (one more entry: the next).
    std::vector<int64_t> peak_diff_ = std::vector<int64_t>(1);
    // Likewise at each Phase record, their device-resident bytes and each stack's
    // (changes only: a stack absent at a mark held there what it held at the one before).
    std::vector<int64_t> mark_diff_ = std::vector<int64_t>(1);
    std::map<size_t, std::map<uint32_t, int64_t>> mark_site_diff_;
    std::vector<std::vector<uint8_t>> folded_records_; // encode's scratch
    std::vector<uint64_t> pins_;                       // ascending
    std::unordered_map<int, Scope> scopes_;
    std::map<std::tuple<uint32_t, int32_t, uint8_t>, format::SiteTotals> sites_;
    uint64_t kept_errors_ = 0;
    format::AllocatorRules rules_;
    std::map<int, BlockDevice> block_devices_;
    std::vector<Block> block_holders_;
    std::vector<Segment> segment_holders_;
    std::vector<Range> oom_ranges_; // a caching allocator's OOMs the analysis measures
    bool blocks_unfolded_ = false;  // expandable segments seen: blocks are kept whole
    uint8_t trailer_[kMaxTrailer] = {};
    size_t trailer_size_ = 0;
    bool exhausted_ = false;     // out of memory once: folds nothing more
    std::vector<uint8_t> items_; // encode's scratch
};

} // namespace gmt::preload
