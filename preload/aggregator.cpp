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
    auto pin = std::lower_bound(pins_.begin(), pins_.end(), alloc_pos);
    return pin != pins_.end() && *pin < free_pos;
}

void Aggregator::fold(const Event& alloc) {
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
        fold(h.alloc.event);
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
                fold(alloc.event);
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
    phases_.emplace_back(pos, std::vector<uint8_t>(record, record + length));
    pin(pos);
}

uint32_t Aggregator::encode(uint64_t sequence, uint64_t capacity, std::vector<uint8_t>& out) {
    pruneHolders();
    struct Item {
        uint64_t pos;
        const Event* event;                // or
        const std::vector<uint8_t>* phase; // a framed Phase record
    };
    std::vector<Item> items;
    items.reserve(live_.size() + 2 * holders_.size() + kept_.size() + phases_.size());
    for (const auto& [address, entry] : live_) {
        items.push_back({entry.pos, &entry.event, nullptr});
    }
    for (const Holder& h : holders_) {
        items.push_back({h.alloc.pos, &h.alloc.event, nullptr});
        items.push_back({h.free.pos, &h.free.event, nullptr});
    }
    for (const Entry& entry : kept_) {
        items.push_back({entry.pos, &entry.event, nullptr});
    }
    for (const auto& [pos, record] : phases_) {
        items.push_back({pos, nullptr, &record});
    }
    std::sort(items.begin(), items.end(),
              [](const Item& a, const Item& b) { return a.pos < b.pos; });

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
        const size_t need = item.event ? format::kMaxEventRecord : item.phase->size();
        if (used + need > room) {
            break;
        }
        if (item.event) {
            used += format::encodeEventRecordTo(items_.data() + used, item.event, coder);
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
