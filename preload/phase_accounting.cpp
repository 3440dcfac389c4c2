#include "phase_accounting.h"
#include "out_of_memory.h"

#include <gpumemtrace/format/byte_coding.h>
#include <gpumemtrace/format/record_codec.h>

#include <algorithm>
#include <span>

namespace gmt::preload {

using namespace account_flags;
using format::BlockAction;
using format::Kind;
using format::Op;
using format::PhaseKind;
using format::RecordTag;

void PhaseAccounting::onRecord(uint64_t pos, const uint8_t* record, uint32_t length) noexcept {
    if (!withoutThrowing([&] { readRecord(pos, record, length); })) {
        outOfMemory();
    }
}

void PhaseAccounting::onEvent(const format::Event& e) noexcept {
    if (!withoutThrowing([&] { followEvent(e); })) {
        outOfMemory();
    }
}

void PhaseAccounting::outOfMemory() noexcept {
    if (open_) {
        now_.unsettled |= kOverflow;
    }
    // The tables may be half updated: the phase's are refilled at the next push, the
    // layout is not followed any more.
    layout_broken_ = true;
    giveBack(live_, sites_, devices_);
    blocks_ = 0;
}

void PhaseAccounting::readRecord(uint64_t pos, const uint8_t* record, uint32_t length) {
    const auto tag = static_cast<RecordTag>(record[0]);
    if (tag == RecordTag::Recording) {
        if (open_) {
            now_.unsettled |= kPaused; // what the pause hid is no phase's
        }
        return;
    }
    if (tag != RecordTag::Phase && tag != RecordTag::CachingAllocator) {
        return;
    }
    format::ByteReader r(std::span<const uint8_t>(record, length));
    r.byte();
    const uint64_t size = r.varint();
    if (tag == RecordTag::CachingAllocator) {
        // The settings the analyzer rebuilds block sizes with, from the same record.
        format::CachingAllocatorInfo info;
        if (r.ok() && size == r.remaining()) {
            format::ByteReader body(r.bytes(size));
            if (format::decodeCachingAllocator(body, info)) {
                rules_ = format::AllocatorRules::parse(info.config);
            }
        }
        return;
    }
    format::PhaseInfo phase;
    if (!r.ok() || size != r.remaining()) {
        if (open_) {
            now_.unsettled |= kOtherPhases; // not ours: the writer frames what it is given
        }
        return;
    }
    format::ByteReader body(r.bytes(size));
    if (!format::decodePhase(body, phase)) {
        if (open_) {
            now_.unsettled |= kOtherPhases;
        }
        return;
    }
    onPhase(pos, phase);
}

void PhaseAccounting::onPhase(uint64_t pos, const format::PhaseInfo& p) {
    if (!open_) {
        if (p.kind == PhaseKind::Push && p.tid != 0 &&
            p.tid == phase_accounting::accountedThread()) {
            open_ = true;
            tid_ = p.tid;
            depth_ = 1;
            ++serial_;
            now_ = {};
            live_.clear();
            sites_.clear();
        }
        return;
    }
    if (p.tid != tid_) {
        // The analyzer's current phase is the innermost of the thread that marked last:
        // from here on, not this one.
        now_.unsettled |= kOtherPhases;
        return;
    }
    if (p.kind == PhaseKind::Push) {
        ++depth_;
    } else if (p.kind == PhaseKind::Pop && --depth_ == 0) {
        open_ = false;
        now_.live_allocations = live_.size();
        for (const auto& [address, live] : live_) {
            if (live.segment) {
                ++now_.cached_allocations;
                now_.cached_bytes += live.size;
            }
        }
        std::lock_guard lock(result_mutex_);
        result_ = now_;
        result_pop_ = pos;
        has_result_ = true;
    }
}

void PhaseAccounting::level(Site& site) {
    if (site.live == 0 || (site.count > 0 && site.levels[0] == site.live) ||
        (site.count > 1 && site.levels[1] == site.live)) {
        return;
    }
    if (site.count == 2) {
        now_.unsettled |= kMayGrow;
        return;
    }
    site.levels[site.count++] = site.live;
}

bool PhaseAccounting::wantsEvents() const {
    return open_ || phase_accounting::accountedThread() != 0;
}

void PhaseAccounting::followEvent(const format::Event& e) {
    if (e.op == Op::Block) {
        onBlock(e);
    } else if (open_) {
        onDeviceEvent(e);
    }
}

void PhaseAccounting::onDeviceEvent(const format::Event& e) {
    if (e.op == Op::Alloc) {
        if (e.result != 0 || e.address == 0) {
            return; // nothing held (analysis/lifetimes.cpp: failed, or NULL for 0 bytes)
        }
        if (e.kind != Kind::Device && e.kind != Kind::None && e.kind != Kind::Managed) {
            now_.unsettled |= kOtherEvents;
            return;
        }
        ++now_.allocations;
        if (live_.size() >= kMaxLive || sites_.size() >= kMaxLive) {
            now_.unsettled |= kOverflow;
            return;
        }
        if (!live_.try_emplace(e.address, Live{e.size, e.stack_id, false}).second) {
            // Allocated again while live: the analyzer ends the first as freed unseen.
            now_.unsettled |= kOtherEvents;
            return;
        }
        now_.live_bytes += e.size;
        now_.peak_increase_bytes = std::max(now_.peak_increase_bytes, now_.live_bytes);
        Site& site = sites_[e.stack_id];
        site.live += e.size;
        level(site);
        return;
    }
    if (e.op == Op::Free) {
        if (e.address == 0 || e.result != 0) {
            return; // a no-op, or refused: what it names is still allocated
        }
        auto it = live_.find(e.address);
        if (it == live_.end()) {
            now_.unsettled |= kFreedBefore; // or never allocated: an error for the analyzer
            return;
        }
        ++now_.frees;
        now_.live_bytes -= it->second.size;
        Site& site = sites_[it->second.stack];
        site.live -= it->second.size;
        level(site);
        live_.erase(it);
        return;
    }
    now_.unsettled |= kOtherEvents;
}

// As BlockTracker::onEvent: the same events change the same layout.
void PhaseAccounting::onBlock(const format::Event& e) {
    if (open_) {
        now_.unsettled |= kBlocks;
    }
    if (layout_broken_) {
        inexact();
        return;
    }
    // Damage the analyzer does not place (BlockTracker::onEvent's bound).
    constexpr uint64_t kMaxBytes = uint64_t{1} << 48;
    if (e.size > kMaxBytes || e.address > UINT64_MAX - kMaxBytes ||
        (e.flags & (format::kFlagInterpreterExiting | format::kFlagBlockSized))) {
        inexact();
        return;
    }
    Device& d = devices_[e.device];
    switch (static_cast<BlockAction>(e.api)) {
    case BlockAction::Alloc:
        blockAlloc(d, e);
        return;
    case BlockAction::FreeRequested:
        freeRequested(d, e);
        return;
    case BlockAction::FreeCompleted:
        // Not found: made in a segment from before the accounting (or never), where no
        // block of a settled phase lies.
        if (auto it = d.blocks.find(e.address); it != d.blocks.end()) {
            if (it->second.allocated) {
                inexact(); // its free_requested is not in the trace: ended here
            }
            endBlock(d, it, false);
        }
        return;
    case BlockAction::SegmentAlloc:
        d.segments[e.address] = e.address + e.size;
        if (auto it = live_.find(e.address);
            open_ && it != live_.end() && it->second.size == e.size) {
            it->second.segment = true;
        }
        return;
    case BlockAction::SegmentFree:
        segmentFree(d, e);
        return;
    case BlockAction::SegmentMap:
    case BlockAction::SegmentUnmap:
        // Expandable segments: ranges that join and split. Not followed: from here on the
        // analyzer decides every phase with block events.
        layout_broken_ = true;
        devices_.clear();
        blocks_ = 0;
        inexact();
        return;
    case BlockAction::Oom:
        inexact();
        return;
    }
    inexact();
}

void PhaseAccounting::blockAlloc(Device& d, const format::Event& e) {
    const uint64_t a = e.address;
    if (auto it = d.blocks.find(a); it != d.blocks.end()) {
        inexact(); // its free is not in the trace: the analyzer ends it here
        endBlock(d, it, false);
    }
    auto segment = d.segments.upper_bound(a);
    if (segment == d.segments.begin() || a >= std::prev(segment)->second) {
        inexact(); // outside the segments known: one from before the accounting, or none
        return;
    }
    const uint64_t segment_end = std::prev(segment)->second;
    auto next = d.blocks.lower_bound(a);
    const uint64_t free_end =
        next != d.blocks.end() ? std::min(next->first, segment_end) : segment_end;
    const bool overlaps = next != d.blocks.begin() && std::prev(next)->second.end > a;
    const format::AllocatorRules::Carved carved =
        rules_.carve(a, e.size, true, free_end, false, overlaps);
    if (!carved.exact) {
        inexact(); // the analyzer counts it as an estimate
    }
    if (blocks_ >= kMaxLive) {
        layout_broken_ = true; // past the bound: no longer the analyzer's layout
        devices_.clear();
        blocks_ = 0;
        inexact();
        return;
    }
    const uint64_t end = a + carved.bytes < a ? UINT64_MAX : a + carved.bytes;
    d.blocks.emplace(a, Block{end, e.stack_id, open_ ? serial_ : 0, true});
    ++blocks_;
    if (!open_) {
        return;
    }
    ++now_.block_allocations;
    ++now_.live_blocks;
    now_.live_block_bytes += end - a;
    if (sites_.size() >= kMaxLive) {
        now_.unsettled |= kOverflow;
        return;
    }
    Site& site = sites_[blockSite(e.stack_id)];
    site.live += end - a;
    level(site);
}

void PhaseAccounting::freeRequested(Device& d, const format::Event& e) {
    auto it = d.blocks.find(e.address);
    if (it == d.blocks.end() || !it->second.allocated) {
        inexact(); // allocated before the accounting began, or never
        return;
    }
    endBlock(d, it, true); // in place until its free_completed
}

void PhaseAccounting::endBlock(Device& d, std::map<uint64_t, Block>::iterator it, bool keep) {
    Block& b = it->second;
    if (b.allocated) {
        b.allocated = false;
        if (open_ && b.phase == serial_) {
            const uint64_t bytes = b.end - it->first;
            ++now_.block_frees;
            --now_.live_blocks;
            now_.live_block_bytes -= bytes;
            Site& site = sites_[blockSite(b.stack)];
            site.live -= std::min(site.live, bytes);
            level(site);
        }
    }
    if (!keep) {
        d.blocks.erase(it);
        --blocks_;
    }
}

void PhaseAccounting::segmentFree(Device& d, const format::Event& e) {
    const uint64_t a = e.address;
    const uint64_t end = a + e.size;
    auto segment = d.segments.upper_bound(a);
    if (segment == d.segments.begin() || a >= std::prev(segment)->second) {
        inexact(); // the analyzer's is unmatched, or one from before the accounting
        return;
    }
    --segment;
    // Blocks are never in memory given back: the analyzer ends them here, as unmatched.
    for (auto it = d.blocks.lower_bound(a); it != d.blocks.end() && it->first < end;) {
        inexact();
        endBlock(d, it++, false);
    }
    d.segments.erase(segment);
}

bool PhaseAccounting::take(uint64_t pop, PhaseAccount& out) {
    std::lock_guard lock(result_mutex_);
    if (!has_result_ || result_pop_ != pop) {
        return false;
    }
    out = result_;
    return true;
}

namespace phase_accounting {

namespace {

std::atomic<uint32_t> g_accounted_tid{0};

// The accounted phase of this thread, as its own Phase records went.
struct ThreadSide {
    uint32_t depth = 0;
    bool broken = false;  // one of the phase's records was not recorded
    uint64_t dropped = 0; // the drop count before the push
    bool popped = false;  // the last record closed a phase: pop and drops below
    uint64_t pop = 0;
    uint64_t pop_dropped = 0;
};

thread_local ThreadSide t_side __attribute__((tls_model("initial-exec")));

} // namespace

void accountThread(uint32_t tid) {
    g_accounted_tid.store(tid, std::memory_order_relaxed);
}

uint32_t accountedThread() {
    return g_accounted_tid.load(std::memory_order_relaxed);
}

void claimed(PhaseKind kind, uint32_t tid, bool recorded, uint64_t first, uint64_t dropped_before,
             uint64_t dropped_after) {
    ThreadSide& t = t_side;
    t.popped = false;
    if (tid != accountedThread() && t.depth == 0) {
        return;
    }
    if (kind == PhaseKind::Push) {
        if (t.depth++ == 0) {
            t.broken = false;
            t.dropped = dropped_before;
        }
    } else if (kind == PhaseKind::Pop && t.depth > 0 && --t.depth == 0) {
        t.broken = t.broken || !recorded;
        t.popped = !t.broken;
        t.pop = first;
        t.pop_dropped = dropped_after - t.dropped;
        return;
    }
    t.broken = t.broken || !recorded;
}

bool lastPop(uint64_t& pop, uint64_t& dropped) {
    if (!t_side.popped) {
        return false;
    }
    pop = t_side.pop;
    dropped = t_side.pop_dropped;
    return true;
}

void resetThread() {
    t_side = {};
}

} // namespace phase_accounting
} // namespace gmt::preload
