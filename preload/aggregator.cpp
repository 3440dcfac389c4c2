#include "aggregator.h"

#include <algorithm>

#include <gpumemtrace/format/event_codec.h>
#include <gpumemtrace/format/record_codec.h>

namespace gmt::preload {

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
    if (!phases_.empty() && kindOf(alloc) != Kind::HostPinned && segment_.peak_pos >= alloc_pos &&
        segment_.peak_pos < free_pos) {
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
    holders_after_prune_ = holders_.size();
}

void Aggregator::onEvent(uint64_t pos, const Event& e) {
    ++summary_.events;
    if (e.result != 0) {
        // A failure: kept, and what was live at it too (its live bytes, its fragmentation).
        if (keep(pos, e, true)) {
            pin(pos);
        }
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
                if (holders_.size() >= 2 * holders_after_prune_ + 1024) {
                    pruneHolders();
                }
            } else {
                fold(alloc.event, alloc.pos, pos);
            }
            return;
        }
    }
    // Everything else stays as it is: a free of what was not folded here (arrays, an
    // address never given), VMM, pools, contexts, teardown, caching-allocator blocks.
    keep(pos, e, false);
}

void Aggregator::onPhase(uint64_t pos, const uint8_t* record, uint32_t length) {
    if (phases_.size() >= format::kMaxKeptPhases) {
        ++summary_.folded_phases;
        return;
    }
    if (!phases_.empty()) {
        // The stretch that ends here had its most live bytes then: a moment to keep.
        pins_.insert(std::upper_bound(pins_.begin(), pins_.end(), segment_.peak_pos),
                     segment_.peak_pos);
    }
    phases_.emplace_back(pos, std::vector<uint8_t>(record, record + length));
    segments_.emplace_back();
    segment_.peak = segment_.live;
    segment_.peak_pos = pos;
    pin(pos);
}

uint32_t Aggregator::encode(uint64_t sequence, uint64_t capacity, std::vector<uint8_t>& out) {
    pruneHolders();
    // Sorted by key: 2 * position, and a stretch's PhaseTotals just before the Phase
    // record that ends it (the last one's after every event).
    struct Item {
        uint64_t key;
        const Event* event;                // or
        const std::vector<uint8_t>* phase; // a framed Phase record, or
        const format::PhaseTotals* totals;
    };
    std::vector<Item> items;
    items.reserve(live_.size() + 2 * holders_.size() + kept_.size() + 2 * phases_.size());
    auto event = [&](const Entry& entry) {
        items.push_back({2 * entry.pos, &entry.event, nullptr, nullptr});
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
    for (size_t i = 0; i < phases_.size(); ++i) {
        items.push_back({2 * phases_[i].first, nullptr, &phases_[i].second, nullptr});
        const uint64_t end = i + 1 < phases_.size() ? 2 * phases_[i + 1].first - 1 : UINT64_MAX;
        items.push_back({end, nullptr, nullptr, &segments_[i]});
    }
    std::sort(items.begin(), items.end(),
              [](const Item& a, const Item& b) { return a.key < b.key; });

    // The site totals and the summary first (a summary's varints take at most 100 bytes).
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
    const uint64_t fixed = head_size + trailer_.size();
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
    summary_.kept_events = live_.size() + 2 * holders_.size() + kept_.size();
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
    if (!trailer_.empty()) {
        out.insert(out.end(), trailer_.begin(), trailer_.end());
        ++records;
    }
    return records;
}

} // namespace gmt::preload
