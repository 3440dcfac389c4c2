#include "aggregator.h"
#include "out_of_memory.h"

#include <algorithm>

#include <gpumemtrace/format/event_codec.h>
#include <gpumemtrace/format/record_codec.h>

#include <span>

namespace gmt::preload {

using format::BlockAction;
using format::Event;
using format::Kind;
using format::Op;

namespace {

Kind kindOf(const Event& e) {
    return e.kind == Kind::None ? Kind::Device : e.kind;
}

// The scopes whose peaks an allocation counts in, as the analysis counts them
// (analyzer/analysis/live_accounting.cpp): its kind always; the resident total and its
// device unless it is pinned host memory. Returns how many of `keys` it filled.
int scopesOf(const Event& alloc, int (&keys)[3], int kind_base, int total, int device_base) {
    const Kind kind = kindOf(alloc);
    int n = 0;
    keys[n++] = kind_base + static_cast<int>(kind);
    if (kind != Kind::HostPinned) {
        keys[n++] = total;
        keys[n++] = device_base + 1 + alloc.device;
    }
    return n;
}

} // namespace

// ---- Out of memory ----------------------------------------------------------------------

template <typename Body> bool Aggregator::guarded(Body&& body) noexcept {
    if (exhausted_) {
        return false;
    }
    if (withoutThrowing(body)) {
        return true;
    }
    // The tables may be half updated: nothing in them is used again.
    exhausted_ = true;
    release();
    return false;
}

void Aggregator::release() noexcept {
    giveBack(live_, holders_, kept_, phases_, segments_, stretch_peaks_, peak_diff_, mark_diff_,
             mark_site_diff_, folded_records_, pins_, scopes_, sites_, block_devices_,
             block_holders_, segment_holders_, oom_ranges_, items_);
}

bool Aggregator::onEvent(uint64_t pos, const Event& e) noexcept {
    return guarded([&] { addEvent(pos, e); });
}

bool Aggregator::onPhase(uint64_t pos, const uint8_t* record, uint32_t length) noexcept {
    return guarded([&] { addPhase(pos, record, length); });
}

bool Aggregator::onCachingAllocator(const uint8_t* record, uint32_t length) noexcept {
    return guarded([&] { readAllocatorRules(record, length); });
}

bool Aggregator::encode(uint64_t sequence, uint64_t capacity, size_t header,
                        std::vector<uint8_t>& out, uint32_t& records) noexcept {
    return guarded([&] {
        out.assign(header, 0);
        records = encodeCheckpoint(sequence, capacity, out);
    });
}

// ---- Folding ----------------------------------------------------------------------------

bool Aggregator::keep(uint64_t pos, const Event& e, bool error) {
    if (error) {
        if (kept_errors_ >= format::kMaxKeptErrors) {
            ++summary_.folded_errors;
            return false;
        }
        ++kept_errors_;
    }
    kept_.push_back({pos, e});
    return true;
}

long Aggregator::segmentOf(uint64_t pos) const {
    auto it = std::upper_bound(phases_.begin(), phases_.end(), pos,
                               [](uint64_t p, const auto& phase) { return p < phase.first; });
    return static_cast<long>(it - phases_.begin()) - 1;
}

void Aggregator::charge(const Event& alloc, uint64_t pos, bool added) {
    int keys[3];
    const int n = scopesOf(alloc, keys, kKindBase, kTotal, kDeviceBase);
    for (int i = 0; i < n; ++i) {
        Scope& s = scopes_[keys[i]];
        if (added) {
            s.live += alloc.size;
            if (s.live > s.peak) { // strictly: the analysis keeps the first of equal peaks
                s.peak = s.live;
                s.peak_pos = pos;
            }
        } else {
            s.live -= std::min(s.live, alloc.size);
        }
    }
    if (kindOf(alloc) != Kind::HostPinned) {
        // The phase tracker's live bytes: the process's device-resident total.
        if (added) {
            segment_.live += alloc.size;
            if (segment_.live > segment_.peak) {
                segment_.peak = segment_.live;
                segment_.peak_pos = pos;
                segment_peak_time_ = alloc.time_ns;
                running_peak_folded_ = 0; // what is alive now is all in live_
            }
        } else {
            segment_.live -= std::min(segment_.live, alloc.size);
        }
    }
}

bool Aggregator::relevant(uint64_t alloc_pos, uint64_t free_pos, const Event& alloc) const {
    int keys[3];
    const int n = scopesOf(alloc, keys, kKindBase, kTotal, kDeviceBase);
    for (int i = 0; i < n; ++i) {
        auto it = scopes_.find(keys[i]);
        if (it != scopes_.end() && it->second.peak_pos >= alloc_pos &&
            it->second.peak_pos < free_pos) {
            return true;
        }
    }
    // The stretch peak that rose most (and the current stretch's while it rises more).
    if (!phases_.empty() && kindOf(alloc) != Kind::HostPinned &&
        ((risesMost() && segment_.peak_pos >= alloc_pos && segment_.peak_pos < free_pos) ||
         (rise_pos_ >= alloc_pos && rise_pos_ < free_pos))) {
        return true;
    }
    auto pin = std::lower_bound(pins_.begin(), pins_.end(), alloc_pos);
    return pin != pins_.end() && *pin < free_pos;
}

void Aggregator::fold(const Event& alloc, uint64_t alloc_pos, uint64_t free_pos) {
    const long made = segmentOf(alloc_pos), freed = segmentOf(free_pos);
    if (made >= 0) {
        ++segments_[static_cast<size_t>(made)].allocations;
        segments_[static_cast<size_t>(made)].bytes += alloc.size;
    }
    if (freed >= 0) {
        ++segments_[static_cast<size_t>(freed)].frees;
    }
    format::SiteTotals& t =
        sites_[{alloc.stack_id, alloc.device, static_cast<uint8_t>(kindOf(alloc))}];
    t.stack = alloc.stack_id;
    t.device = alloc.device;
    t.kind = static_cast<uint8_t>(kindOf(alloc));
    ++t.allocations;
    t.bytes += alloc.size;
    t.largest = std::max(t.largest, alloc.size);
    ++summary_.folded_allocations;
    summary_.folded_bytes += alloc.size;
    ++summary_.folded_frees;
    if (kindOf(alloc) != Kind::HostPinned) { // the analysis's live bytes, and growth's
        foldSpan(alloc.stack_id, alloc.size, alloc_pos, free_pos, true);
    }
}

void Aggregator::foldSpan(uint32_t stack, uint64_t bytes, uint64_t from, uint64_t to, bool level) {
    const auto delta = static_cast<int64_t>(bytes);
    auto mark = [&](uint64_t pos) {
        return static_cast<size_t>(
            std::lower_bound(phases_.begin(), phases_.end(), pos,
                             [](const auto& phase, uint64_t p) { return phase.first < p; }) -
            phases_.begin());
    };
    auto site = [&](size_t at, int64_t change) {
        auto& sites = mark_site_diff_[at];
        if ((sites[stack] += change) == 0) {
            sites.erase(stack);
            if (sites.empty()) {
                mark_site_diff_.erase(at);
            }
        }
    };
    // Alive at the Phase records from the first at or after `from` to the last before `to`.
    const size_t first = mark(from), after = mark(to);
    if (first < after) {
        site(first, delta);
        site(after, -delta);
        if (level) {
            mark_diff_[first] += delta;
            mark_diff_[after] -= delta;
        }
    }
    if (!level) {
        return;
    }
    auto peak = [&](uint64_t pos) {
        return static_cast<size_t>(
            std::lower_bound(stretch_peaks_.begin(), stretch_peaks_.end(), pos,
                             [](const StretchPeak& s, uint64_t p) { return s.pos < p; }) -
            stretch_peaks_.begin());
    };
    const size_t first_peak = peak(from), after_peak = peak(to);
    if (first_peak < after_peak) {
        peak_diff_[first_peak] += delta;
        peak_diff_[after_peak] -= delta;
    }
    if (!phases_.empty() && segment_.peak_pos >= from && segment_.peak_pos < to) {
        running_peak_folded_ += delta; // the current stretch's peak, not in stretch_peaks_
    }
}

void Aggregator::maybePrune() {
    if (holders_.size() + block_holders_.size() + segment_holders_.size() >=
        2 * holders_after_prune_ + 1024) {
        pruneHolders();
    }
}

// A holder stops mattering once a higher peak of each of its scopes came after its free.
void Aggregator::pruneHolders() {
    std::erase_if(holders_, [&](const Holder& h) {
        if (relevant(h.alloc.pos, h.free.pos, h.alloc.event)) {
            return false;
        }
        fold(h.alloc.event, h.alloc.pos, h.free.pos);
        return true;
    });
    std::erase_if(block_holders_, [&](const Block& b) {
        if (blocks_unfolded_ || blockRelevant(b.alloc.pos, b.free_completed.pos + 1, b.device)) {
            return false;
        }
        foldBlock(b);
        return true;
    });
    std::erase_if(segment_holders_, [&](const Segment& s) {
        return !blocks_unfolded_ &&
               !blockRelevant(s.alloc.pos, s.free.pos + 1, s.alloc.event.device);
    });
    holders_after_prune_ = holders_.size() + block_holders_.size() + segment_holders_.size();
}

void Aggregator::addEvent(uint64_t pos, const Event& e) {
    ++summary_.events;
    if (e.result != 0) {
        // A failure: kept, and what was live at it too (its live bytes, its fragmentation).
        if (keep(pos, e, true)) {
            pin(pos);
        }
        return;
    }
    if (e.op == Op::Block) {
        onBlock(pos, e);
        return;
    }
    const Kind kind = kindOf(e);
    if (e.op == Op::Alloc && e.address != 0 && kind != Kind::Array) {
        auto [it, inserted] = live_.try_emplace(e.address);
        if (!inserted) {
            // Given again without a free between: the analysis ends the first implicitly.
            // Kept as it is, so that it does.
            charge(it->second.event, pos, false);
            kept_.push_back(it->second);
        }
        it->second = {pos, e};
        charge(e, pos, true);
        return;
    }
    if (e.op == Op::Free) {
        auto it = live_.find(e.address);
        if (it != live_.end()) {
            const Entry alloc = it->second;
            live_.erase(it);
            charge(alloc.event, pos, false);
            if (relevant(alloc.pos, pos, alloc.event)) {
                holders_.push_back({alloc, {pos, e}});
                maybePrune();
            } else {
                fold(alloc.event, alloc.pos, pos);
            }
            return;
        }
    }
    // Everything else stays as it is: a free of what was not folded here (arrays, an
    // address never given), VMM, pools, contexts, teardown.
    keep(pos, e, false);
}

void Aggregator::addPhase(uint64_t pos, const uint8_t* record, uint32_t length) {
    if (phases_.size() >= format::kMaxKeptPhases) {
        ++summary_.folded_phases;
        return;
    }
    if (!phases_.empty()) {
        // The stretch that ends here had its most live bytes then: what the allocations
        // folded from now on held there is written with it (FoldedPeak), nothing is kept
        // unless it rose most of all (strictly: the analysis keeps the first of equals).
        if (risesMost()) {
            best_rise_ = segment_.peak - stretch_start_live_;
            rise_pos_ = segment_.peak_pos;
        }
        stretch_peaks_.push_back(
            {segment_.peak_pos,
             segment_peak_time_ - std::min(segment_peak_time_, stretch_start_ns_)});
        // What was folded while it ran counts there; what is folded later, by its span.
        peak_diff_.back() += running_peak_folded_;
        peak_diff_.push_back(-running_peak_folded_);
        running_peak_folded_ = 0;
    }
    format::ByteReader r(std::span<const uint8_t>(record, length));
    r.byte();   // the tag
    r.varint(); // the body's size
    const uint64_t time_ns = r.varint();
    stretch_start_ns_ = r.ok() ? time_ns : 0;
    phases_.emplace_back(pos, std::vector<uint8_t>(record, record + length));
    segments_.emplace_back();
    mark_diff_.push_back(0);
    segment_.peak = segment_.live;
    segment_.peak_pos = pos;
    stretch_start_live_ = segment_.live;
}

void Aggregator::encodeFolded(std::vector<std::pair<uint64_t, size_t>>& keyed) {
    folded_records_.clear();
    auto add = [&](uint64_t key, format::RecordTag tag, const std::vector<uint8_t>& body) {
        std::vector<uint8_t> framed(body.size() + 16);
        format::ByteWriter w(framed.data(), framed.size());
        format::appendRecord(w, tag, body.data(), body.size());
        framed.resize(w.size());
        keyed.emplace_back(key, folded_records_.size());
        folded_records_.push_back(std::move(framed));
    };
    std::vector<uint8_t> body;
    auto encoded = [&](auto&& write) {
        format::ByteWriter w(body.data(), body.size());
        write(w);
        body.resize(w.size());
        return body;
    };
    auto site_changes = mark_site_diff_.begin();
    for (size_t i = 0; i < phases_.size(); ++i) {
        format::FoldedMark m;
        m.level = mark_diff_[i];
        if (site_changes != mark_site_diff_.end() && site_changes->first == i) {
            for (const auto& [stack, bytes] : site_changes->second) {
                m.sites.push_back({stack, bytes});
            }
            ++site_changes;
        }
        if (m.level != 0 || !m.sites.empty()) {
            body.assign(16 + 24 * m.sites.size(), 0);
            add(4 * phases_[i].first + 1, format::RecordTag::FoldedMark,
                encoded([&](format::ByteWriter& w) { format::encodeFoldedMark(w, m); }));
        }
    }
    auto peak = [&](uint64_t pos, uint64_t after_ns, int64_t held, uint64_t mark_pos) {
        // At the Phase record itself, FoldedMark says it.
        if (held > 0 && pos != mark_pos) {
            const format::FoldedPeak p{after_ns, static_cast<uint64_t>(held)};
            body.assign(24, 0);
            add(4 * pos + 3, format::RecordTag::FoldedPeak,
                encoded([&](format::ByteWriter& w) { format::encodeFoldedPeak(w, p); }));
        }
    };
    int64_t held = 0;
    for (size_t k = 0; k < stretch_peaks_.size(); ++k) {
        held += peak_diff_[k];
        peak(stretch_peaks_[k].pos, stretch_peaks_[k].after_ns, held, phases_[k].first);
    }
    if (!phases_.empty()) { // the current stretch, so far
        peak(segment_.peak_pos,
             segment_peak_time_ - std::min(segment_peak_time_, stretch_start_ns_),
             running_peak_folded_, phases_.back().first);
    }
}

uint32_t Aggregator::encodeCheckpoint(uint64_t sequence, uint64_t capacity,
                                      std::vector<uint8_t>& out) {
    pruneHolders();
    // Sorted by key: 4 * position + 2; a FoldedPeak just after the event of its moment; a
    // stretch's PhaseTotals, then the FoldedMark, just before the Phase record that ends it
    // (the last PhaseTotals after every event).
    struct Item {
        uint64_t key;
        const Event* event;                // or
        const std::vector<uint8_t>* phase; // a framed Phase or Folded* record, or
        const format::PhaseTotals* totals;
    };
    std::vector<std::pair<uint64_t, size_t>> folded;
    encodeFolded(folded);
    std::vector<Item> items;
    size_t block_events = segment_holders_.size() * 2 + block_holders_.size() * 3;
    for (const auto& [device, d] : block_devices_) {
        block_events += d.segments.size() + 2 * d.blocks.size();
    }
    items.reserve(live_.size() + 2 * holders_.size() + kept_.size() + 2 * phases_.size() +
                  block_events + folded.size());
    auto event = [&](const Entry& entry) {
        items.push_back({4 * entry.pos + 2, &entry.event, nullptr, nullptr});
    };
    for (const auto& [address, entry] : live_) {
        event(entry);
    }
    for (const Holder& h : holders_) {
        event(h.alloc);
        event(h.free);
    }
    for (const Entry& entry : kept_) {
        event(entry);
    }
    auto block = [&](const Block& b) {
        event(b.alloc);
        if (b.free_requested.event.op == Op::Block) {
            event(b.free_requested);
        }
        if (b.free_completed.event.op == Op::Block) {
            event(b.free_completed);
        }
    };
    for (const auto& [device, d] : block_devices_) {
        for (const auto& [address, segment] : d.segments) {
            event(segment.alloc);
        }
        for (const auto& [address, b] : d.blocks) {
            block(b);
        }
    }
    for (const Block& b : block_holders_) {
        block(b);
    }
    for (const Segment& segment : segment_holders_) {
        event(segment.alloc);
        event(segment.free);
    }
    for (size_t i = 0; i < phases_.size(); ++i) {
        items.push_back({4 * phases_[i].first + 2, nullptr, &phases_[i].second, nullptr});
        const uint64_t end = i + 1 < phases_.size() ? 4 * phases_[i + 1].first : UINT64_MAX;
        items.push_back({end, nullptr, nullptr, &segments_[i]});
    }
    for (const auto& [key, index] : folded) {
        items.push_back({key, nullptr, &folded_records_[index], nullptr});
    }
    std::sort(items.begin(), items.end(),
              [](const Item& a, const Item& b) { return a.key < b.key; });

    // The site totals and the summary first (a summary's varints take at most 110 bytes).
    std::vector<uint8_t> head(128 + sites_.size() * 64);
    uint32_t records = 0;
    size_t head_size = 128; // the summary goes before, once its counts are known
    for (const auto& [key, totals] : sites_) {
        uint8_t body[48];
        format::ByteWriter b(body, sizeof body);
        format::encodeSiteTotals(b, totals);
        format::ByteWriter w(head.data() + head_size, head.size() - head_size);
        format::appendRecord(w, format::RecordTag::SiteTotals, body, b.size());
        head_size += w.size();
        ++records;
    }
    const uint64_t fixed = head_size + trailer_size_;
    const uint64_t room = capacity > fixed ? capacity - fixed : 0;

    items_.resize(std::min<uint64_t>(room, items.size() * format::kMaxEventRecord + 1) +
                  format::kMaxEventRecord);
    size_t used = 0;
    format::EventCoder coder{};
    uint64_t written = 0;
    for (const Item& item : items) {
        const size_t need = item.phase ? item.phase->size() : format::kMaxEventRecord;
        if (used + need > room) {
            break;
        }
        if (item.event) {
            used += format::encodeEventRecordTo(items_.data() + used, item.event, coder);
        } else if (item.totals) {
            uint8_t body[32];
            format::ByteWriter b(body, sizeof body);
            format::encodePhaseTotals(b, *item.totals);
            format::ByteWriter w(items_.data() + used, items_.size() - used);
            format::appendRecord(w, format::RecordTag::PhaseTotals, body, b.size());
            used += w.size();
        } else {
            if (items_.size() < used + need) {
                items_.resize(used + need);
            }
            std::copy(item.phase->begin(), item.phase->end(), items_.begin() + used);
            used += need;
        }
        ++written;
    }
    records += static_cast<uint32_t>(written);
    // The events written or not (a live block has no free yet: block_events counts more).
    summary_.kept_events = static_cast<uint64_t>(
        std::count_if(items.begin(), items.end(), [](const Item& i) { return i.event; }));
    summary_.over_budget = items.size() - written;
    summary_.budget = region_bytes_;
    summary_.sequence = sequence;

    uint8_t body[128];
    format::ByteWriter b(body, sizeof body);
    format::encodeAggregateSummary(b, summary_);
    uint8_t summary[160];
    format::ByteWriter s(summary, sizeof summary);
    format::appendRecord(s, format::RecordTag::AggregateSummary, body, b.size());
    ++records;

    out.insert(out.end(), summary, summary + s.size());
    out.insert(out.end(), head.begin() + 128, head.begin() + static_cast<long>(head_size));
    out.insert(out.end(), items_.begin(), items_.begin() + static_cast<long>(used));
    if (trailer_size_ > 0) {
        out.insert(out.end(), trailer_, trailer_ + trailer_size_);
        ++records;
    }
    return records;
}

// ---- The tensor level: a caching allocator's blocks -------------------------------------

void Aggregator::readAllocatorRules(const uint8_t* record, uint32_t length) {
    format::ByteReader r(std::span<const uint8_t>(record, length));
    r.byte(); // the tag
    const uint64_t size = r.varint();
    format::CachingAllocatorInfo info;
    if (r.ok() && size <= r.remaining() && format::decodeCachingAllocator(r, info)) {
        rules_ = format::AllocatorRules::parse(info.config);
    }
}

void Aggregator::chargeBlock(int key, uint64_t bytes, uint64_t pos, bool added) {
    Scope& s = scopes_[key];
    if (added) {
        s.live += bytes;
        if (s.live > s.peak) { // strictly, as BlockTracker and LiveAccounting
            s.peak = s.live;
            s.peak_pos = pos;
            s.settle_pos = UINT64_MAX;
        }
    } else {
        s.live -= std::min(s.live, bytes);
    }
}

// BlockTracker's gate: the tensor peak's pending space measurement is taken at the first
// end of a block or segment after it.
void Aggregator::gateBlocks(uint64_t pos) {
    Scope& s = scopes_[kBlockTotal];
    if (s.settle_pos == UINT64_MAX) {
        s.settle_pos = pos;
    }
}

bool Aggregator::blockRelevant(uint64_t from, uint64_t to, int device) const {
    // A moment `at` lies in [from, to).
    auto point = [&](int key) {
        auto it = scopes_.find(key);
        return it != scopes_.end() && it->second.peak > 0 && it->second.peak_pos >= from &&
               it->second.peak_pos < to;
    };
    if (point(kBlockDeviceBase - 1 - device) || point(kReservedDeviceBase - 1 - device) ||
        point(kTotal) || point(kDeviceBase + 1 + device)) {
        return true;
    }
    if (auto it = scopes_.find(kBlockTotal); it != scopes_.end() && it->second.peak > 0 &&
                                             it->second.peak_pos < to &&
                                             it->second.settle_pos >= from) {
        return true;
    }
    for (const Range& r : oom_ranges_) {
        if (r.from < to && r.to >= from) {
            return true;
        }
    }
    // An OOM to come would pin what was there since the device's last block alloc.
    if (auto d = block_devices_.find(device); d != block_devices_.end() &&
                                              oom_ranges_.size() < kMaxMeasuredOoms &&
                                              to > d->second.last_alloc_pos) {
        return true;
    }
    auto pin = std::lower_bound(pins_.begin(), pins_.end(), from);
    return pin != pins_.end() && *pin < to;
}

void Aggregator::keepBlock(BlockDevice& d, const Block& b) {
    // Its segment is kept too: the analysis places a block inside one.
    auto seg = d.segments.upper_bound(b.alloc.event.address);
    if (seg != d.segments.begin()) {
        std::prev(seg)->second.keep = true;
    }
    kept_.push_back(b.alloc);
    if (b.free_requested.event.op == Op::Block) {
        kept_.push_back(b.free_requested);
    }
    if (b.free_completed.event.op == Op::Block) {
        kept_.push_back(b.free_completed);
    }
}

void Aggregator::foldBlock(const Block& b) {
    const Event& e = b.alloc.event;
    const uint64_t bytes = e.actual_size;
    // Live at the tensor level from its alloc to its free's request (BlockTracker's).
    foldSpan(e.stack_id, bytes, b.alloc.pos, b.free_requested.pos, false);
    format::SiteTotals& t = sites_[{e.stack_id, e.device, static_cast<uint8_t>(Kind::Block)}];
    t.stack = e.stack_id;
    t.device = e.device;
    t.kind = static_cast<uint8_t>(Kind::Block);
    ++t.allocations;
    t.bytes += bytes;
    t.largest = std::max(t.largest, bytes);
    ++summary_.folded_allocations;
    summary_.folded_bytes += bytes;
    ++summary_.folded_frees;
    if (e.flags & format::kFlagBlockEstimated) {
        ++summary_.folded_estimated_blocks;
    }
}

// A block leaves the mirror (free_completed, or its segment given back): held while it
// matters, else folded.
void Aggregator::endBlock(BlockDevice& d, std::map<uint64_t, Block>::iterator it, uint64_t pos) {
    Block& b = it->second;
    const uint64_t bytes = b.end - it->first;
    if (b.allocated) {
        chargeBlock(kBlockTotal, bytes, pos, false);
        chargeBlock(kBlockDeviceBase - 1 - b.device, bytes, pos, false);
    }
    if (b.damaged || b.allocated || blocks_unfolded_) {
        keepBlock(d, b);
    } else if (blockRelevant(b.alloc.pos, b.free_completed.pos + 1, b.device)) {
        block_holders_.push_back(std::move(b));
        maybePrune();
    } else {
        foldBlock(b);
    }
    d.blocks.erase(it);
}

void Aggregator::blockAlloc(uint64_t pos, const Event& e, BlockDevice& d) {
    const uint64_t a = e.address;
    bool damaged = false;
    if (auto it = d.blocks.find(a); it != d.blocks.end()) {
        it->second.damaged = true; // given again without its free: the analysis ends it here
        endBlock(d, it, pos);
        damaged = true;
    }
    auto seg = d.segments.upper_bound(a);
    const bool in_segment = seg != d.segments.begin() && a < std::prev(seg)->second.end;
    if (!in_segment || blocks_unfolded_) {
        // Outside what the mirror knows (an expandable segment, damage): kept as it is, the
        // analysis places it; the mirror no longer knows the sizes, so it folds no more.
        blocks_unfolded_ = true;
        kept_.push_back({pos, e});
        return;
    }
    Segment& s = std::prev(seg)->second;
    auto next = d.blocks.lower_bound(a);
    const uint64_t free_end = next != d.blocks.end() ? std::min(next->first, s.end) : s.end;
    const bool overlaps = next != d.blocks.begin() && std::prev(next)->second.end > a;
    const format::AllocatorRules::Carved c =
        rules_.carve(a, e.size, true, free_end, false, overlaps);
    Block b;
    b.alloc = {pos, e};
    b.alloc.event.actual_size = c.bytes;
    b.alloc.event.flags |= format::kFlagBlockSized | (c.exact ? 0 : format::kFlagBlockEstimated);
    b.end = a + c.bytes;
    b.device = e.device;
    b.damaged = damaged;
    d.blocks.emplace(a, b);
    d.last_alloc_pos = pos;
    chargeBlock(kBlockTotal, c.bytes, pos, true);
    chargeBlock(kBlockDeviceBase - 1 - e.device, c.bytes, pos, true);
}

void Aggregator::onBlock(uint64_t pos, const Event& e) {
    const auto action = static_cast<BlockAction>(e.api);
    switch (action) {
    case BlockAction::FreeRequested:
    case BlockAction::FreeCompleted:
    case BlockAction::SegmentFree:
    case BlockAction::SegmentUnmap:
        gateBlocks(pos);
        break;
    default:
        break;
    }
    // As BlockTracker: no allocator hands out more than 2^48 bytes; such an event is damage.
    constexpr uint64_t kMaxBytes = uint64_t{1} << 48;
    if (e.size > kMaxBytes || e.address > UINT64_MAX - kMaxBytes) {
        kept_.push_back({pos, e});
        return;
    }
    BlockDevice& d = block_devices_[e.device];
    switch (action) {
    case BlockAction::Alloc:
        blockAlloc(pos, e, d);
        return;
    case BlockAction::FreeRequested: {
        auto it = d.blocks.find(e.address);
        if (it == d.blocks.end() || !it->second.allocated) {
            break; // the analysis counts it unmatched
        }
        Block& b = it->second;
        b.allocated = false;
        b.free_requested = {pos, e};
        // Blocks the interpreter frees at exit are listed by site: kept.
        b.damaged |= (e.flags & format::kFlagInterpreterExiting) != 0;
        chargeBlock(kBlockTotal, b.end - it->first, pos, false);
        chargeBlock(kBlockDeviceBase - 1 - b.device, b.end - it->first, pos, false);
        return;
    }
    case BlockAction::FreeCompleted: {
        auto it = d.blocks.find(e.address);
        if (it == d.blocks.end()) {
            break;
        }
        it->second.free_completed = {pos, e};
        it->second.damaged |= it->second.allocated; // its request was not recorded
        endBlock(d, it, pos);
        return;
    }
    case BlockAction::SegmentAlloc: {
        if (blocks_unfolded_ || d.segments.contains(e.address)) {
            blocks_unfolded_ = true;
            break;
        }
        d.segments[e.address] = Segment{e.address + e.size, {pos, e}, {}};
        chargeBlock(kReservedDeviceBase - 1 - e.device, e.size, pos, true);
        return;
    }
    case BlockAction::SegmentFree: {
        auto it = d.segments.find(e.address);
        if (it == d.segments.end()) {
            break;
        }
        Segment s = std::move(it->second);
        d.segments.erase(it);
        s.free = {pos, e};
        chargeBlock(kReservedDeviceBase - 1 - e.device, e.size, pos, false);
        bool damaged = false;
        for (auto b = d.blocks.lower_bound(e.address); b != d.blocks.end() && b->first < s.end;) {
            damaged = true; // their frees are missing: the analysis ends them here
            b->second.damaged = true;
            endBlock(d, b++, pos);
        }
        if (damaged || s.keep || blocks_unfolded_ || s.alloc.event.size != e.size) {
            kept_.push_back(s.alloc);
            kept_.push_back(s.free);
        } else if (blockRelevant(s.alloc.pos, pos + 1, e.device)) {
            segment_holders_.push_back(std::move(s));
            maybePrune();
        }
        return;
    }
    case BlockAction::Oom:
        if (oom_ranges_.size() < kMaxMeasuredOoms) {
            // Its measurement: the segments then, and those given back since the last alloc.
            oom_ranges_.push_back({d.last_alloc_pos, pos});
        }
        break;
    default: // expandable segments' maps and unmaps: not mirrored
        blocks_unfolded_ = true;
        break;
    }
    kept_.push_back({pos, e});
}

} // namespace gmt::preload
