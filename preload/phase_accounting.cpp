#include "phase_accounting.h"

#include <gpumemtrace/format/byte_coding.h>
#include <gpumemtrace/format/record_codec.h>

#include <algorithm>
#include <span>

namespace gmt::preload {

using namespace account_flags;
using format::Kind;
using format::Op;
using format::PhaseKind;
using format::RecordTag;

void PhaseAccounting::onRecord(uint64_t pos, const uint8_t* record, uint32_t length) {
    const auto tag = static_cast<RecordTag>(record[0]);
    if (tag == RecordTag::Recording) {
        if (open_) {
            now_.unsettled |= kPaused; // what the pause hid is no phase's
        }
        return;
    }
    if (tag != RecordTag::Phase) {
        return;
    }
    format::ByteReader r(std::span<const uint8_t>(record, length));
    r.byte();
    const uint64_t size = r.varint();
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

void PhaseAccounting::onEvent(const format::Event& e) {
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
        if (!live_.try_emplace(e.address, Live{e.size, e.stack_id}).second) {
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
