// The blocks a framework's caching allocator hands out inside its segments, rebuilt from its
// block events (format::Op::Block; docs/frameworks.md): the tensor level of a PyTorch
// program, beside the segment level the CUDA calls show. Per device: the segments (taken
// with cudaMalloc, or ranges mapped into an expandable segment), the blocks in them, what is
// allocated and reserved and their peaks, and at any moment the free space inside the
// segments — reserved but unallocated, split free blocks, the largest free block per
// segment and per stream. Blocks still allocated when the process ends are the program's
// leaks, grouped like the segment level's (Lifetimes); frees the interpreter made at exit
// are counted apart.
//
// The events give the bytes each tensor asked for, not the block's size, which is what
// PyTorch counts (memory_stats' allocated_bytes): the size is rebuilt from the free block
// the allocation came from, with PyTorch's rounding and splitting rules (allocator_rules.h).
#pragma once

#include "analysis/caching/allocator_rules.h"
#include "analysis/lifetimes.h"
#include "analysis/live_accounting.h"
#include "model/report.h"

#include <gpumemtrace/format/aggregate.h>
#include <gpumemtrace/format/event.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gmt::analyzer {

// The free space inside one device's segments at one moment, measured in the report's own
// type (model/report.h InsideSegmentsReport, with its StreamSpaceReport and
// SegmentSpaceReport rows): measure() fills the figures, the report builder the pid, moment,
// time and exactness. The OOM hints need one figure beyond what the report shows.
struct InsideSegments : InsideSegmentsReport {
    // Of free_bytes, the bytes in whole 2 MiB-aligned pages: what expandable segments could
    // unmap and map again elsewhere.
    uint64_t free_whole_pages = 0;
};

// A caching allocator's out-of-memory: it could not serve `requested` bytes.
struct BlockOom {
    uint64_t time_ns = 0;
    int device = 0;
    uint64_t stream = 0;
    uint64_t requested = 0;   // rounded, as the allocator tried it
    uint64_t device_free = 0; // what the driver said was free
    uint32_t stack = 0;
    uint64_t released_before = 0; // segments given back right before giving up
    InsideSegments space;         // the segments then
};

class BlockTracker {
  public:
    BlockTracker(uint32_t process, LiveAccounting& accounting);

    void setRules(const AllocatorRules& rules) { rules_ = rules; }
    const AllocatorRules& rules() const { return rules_; }

    // One Op::Block event; `phase`: the process's current phase. True for an OOM. Every
    // change to the blocks comes through here (or releaseAll); one that ends a block or a
    // segment first takes the accounting's pending peak snapshot.
    bool onEvent(const format::Event& e, uint32_t phase);
    // Blocks an aggregated trace folded (format/aggregate.h: allocated, freed and in their
    // segment at no moment the report describes), of one site: counted in the device's
    // allocations and frees and in what the site allocated, never replayed.
    void addFolded(const format::SiteTotals& folded);
    // Of those, `n` whose sizes the recorder could only estimate.
    void addFoldedEstimated(uint64_t n) { estimated_ += n; }
    // The process ended: its blocks stop counting as live (kept for finish()).
    void releaseAll(uint64_t time_ns);
    // Blocks still allocated become leaks; call once, at the end.
    void finish();

    // The free space inside the device's segments now, the `top` segments with most free.
    InsideSegments measure(int device, size_t top) const;
    std::vector<int> devices() const;
    // Blocks and segments a measurement walks.
    size_t walkSize() const;

    // A block as views list it: allocated, or freed and still waiting for its streams.
    struct BlockView {
        uint64_t address = 0;
        uint64_t bytes = 0;     // the block's size, as PyTorch counts it
        uint64_t requested = 0; // what its tensor asked for
        uint64_t stream = 0;
        uint32_t stack = 0;
        bool allocated = true;
    };
    // The blocks inside [address, address + bytes) of a device's segments, in address order
    // (the export's snapshot lists a segment's blocks with them).
    std::vector<BlockView> blocksIn(int device, uint64_t address, uint64_t bytes) const;
    // A segment now: one cudaMalloc, or one contiguous mapped range of an expandable segment.
    struct SegmentView {
        uint64_t address = 0;
        uint64_t bytes = 0;
        uint64_t stream = 0;
        bool expandable = false;
    };
    std::vector<SegmentView> segments(int device) const;

    struct DeviceTotals {
        uint64_t reserved = 0;
        uint64_t allocated = 0;
        PeakPoint reserved_peak;  // segment level: max_memory_reserved()
        PeakPoint allocated_peak; // tensor level: max_memory_allocated()
        uint64_t allocations = 0;
        uint64_t frees = 0;
    };
    const std::map<int, DeviceTotals>& totals() const { return totals_; }
    const std::vector<BlockOom>& ooms() const { return ooms_; }
    // Blocks still allocated when the process ended (kind Block), grouped like the segment
    // level's leaks: whether they are leaks or kept at exit, the leak policy decides
    // (report/leak_policy.h keptAtExit).
    const std::map<LeakKey, LeakGroup>& leaks() const { return leaks_; }
    // Blocks the interpreter freed while finalizing (what modules still held at exit), by
    // allocation stack.
    const std::map<uint32_t, SiteLive>& exitFreed() const { return exit_freed_; }
    // The interpreter was seen finalizing: it freed blocks at exit.
    bool interpreterFinalized() const { return !exit_freed_.empty(); }
    uint64_t unmatched() const { return unmatched_; } // frees or allocs the trace cannot place
    uint64_t estimated() const { return estimated_; } // blocks whose size is an estimate

  private:
    // The one gate before an end (as Lifetimes::gate): the tensor peak's pending snapshot is
    // taken now, while the blocks and segments (and the process, not yet ended) still hold
    // its live set.
    void gate() { accounting_.settle(); }

    struct Segment {
        uint64_t end = 0;
        uint64_t stream = 0;
        bool expandable = false;
    };
    struct Block {
        uint64_t end = 0;       // address + block bytes
        uint64_t requested = 0; // what the tensor asked for
        uint64_t stream = 0;
        uint64_t time_ns = 0;
        uint32_t stack = 0;
        uint32_t site = kNoSite;
        uint32_t phase = kNoPhase;
        bool allocated = true; // false: freed, its memory waiting for the streams it was used on
        bool counted = true;   // still charged to the accounting (not after releaseAll)
    };
    struct Device {
        std::map<uint64_t, Segment> segments;
        std::map<uint64_t, Block> blocks;
        uint64_t released_since_alloc = 0; // segments given back since the last block alloc
    };

    Charge charge(const Block& b, uint64_t address, int device) const;
    void alloc(Device& d, DeviceTotals& t, const format::Event& e, uint32_t phase);
    void freeRequested(Device& d, DeviceTotals& t, const format::Event& e);
    void addSegment(Device& d, DeviceTotals& t, const format::Event& e, bool expandable);
    void removeSegment(Device& d, DeviceTotals& t, const format::Event& e, bool expandable);
    // The segment holding `address`, or end().
    std::map<uint64_t, Segment>::iterator segmentAt(Device& d, uint64_t address);
    void endBlock(Device& d, std::map<uint64_t, Block>::iterator it, int device, uint64_t time_ns);

    uint32_t process_;
    LiveAccounting& accounting_;
    AllocatorRules rules_;
    std::map<int, Device> devices_;
    std::map<int, DeviceTotals> totals_;
    std::vector<BlockOom> ooms_;
    std::map<LeakKey, LeakGroup> leaks_;
    std::map<uint32_t, SiteLive> exit_freed_;
    uint64_t unmatched_ = 0;
    uint64_t estimated_ = 0;
    static constexpr size_t kMaxOoms = 100;
};

} // namespace gmt::analyzer
