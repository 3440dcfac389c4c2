#include "analysis/caching/block_tracker.h"
#include "base/saturating.h"

#include <algorithm>

namespace gmt::analyzer {

using format::BlockAction;

BlockTracker::BlockTracker(uint32_t process, LiveAccounting& accounting)
    : process_(process), accounting_(accounting) {}

Charge BlockTracker::charge(const Block& b, uint64_t address, int device) const {
    Charge c;
    c.process = process_;
    c.stack = b.stack;
    c.device = device;
    c.kind = format::Kind::Block;
    c.bytes = b.end - address;
    c.site = b.site;
    return c;
}

std::map<uint64_t, BlockTracker::Segment>::iterator BlockTracker::segmentAt(Device& d,
                                                                            uint64_t address) {
    auto it = d.segments.upper_bound(address);
    if (it == d.segments.begin()) {
        return d.segments.end();
    }
    --it;
    return address < it->second.end ? it : d.segments.end();
}

void BlockTracker::endBlock(Device& d, std::map<uint64_t, Block>::iterator it, int device,
                            uint64_t time_ns) {
    Block& b = it->second;
    if (b.allocated) {
        totals_[device].allocated -= std::min(totals_[device].allocated, b.end - it->first);
    }
    if (b.counted) {
        accounting_.remove(charge(b, it->first, device), time_ns);
    }
    d.blocks.erase(it);
}

bool BlockTracker::onEvent(const format::Event& e, uint32_t phase) {
    switch (static_cast<BlockAction>(e.api)) {
    case BlockAction::FreeRequested:
    case BlockAction::FreeCompleted:
    case BlockAction::SegmentFree:
    case BlockAction::SegmentUnmap:
        gate();
        break;
    default:
        break;
    }
    // No allocator hands out more than 2^48 bytes or wraps around the address space: such an
    // event is damage, and is not placed.
    constexpr uint64_t kMaxBytes = uint64_t{1} << 48;
    if (e.size > kMaxBytes || e.address > UINT64_MAX - kMaxBytes) {
        ++unmatched_;
        return false;
    }
    const int device = e.device;
    Device& d = devices_[device];
    DeviceTotals& t = totals_[device];
    switch (static_cast<BlockAction>(e.api)) {
    case BlockAction::Alloc:
        alloc(d, t, e, phase);
        break;
    case BlockAction::FreeRequested:
        freeRequested(d, t, e);
        break;
    case BlockAction::FreeCompleted: {
        auto it = d.blocks.find(e.address);
        if (it == d.blocks.end()) {
            break; // made before the tracker was attached (its request was unmatched too)
        }
        if (it->second.allocated) {
            ++unmatched_; // the request was not recorded: ended here
            ++t.frees;
        }
        endBlock(d, it, device, e.time_ns);
        break;
    }
    case BlockAction::SegmentAlloc:
        addSegment(d, t, e, false);
        break;
    case BlockAction::SegmentMap:
        addSegment(d, t, e, true);
        break;
    case BlockAction::SegmentFree:
        removeSegment(d, t, e, false);
        break;
    case BlockAction::SegmentUnmap:
        removeSegment(d, t, e, true);
        break;
    case BlockAction::Oom:
        if (ooms_.size() < kMaxOoms) {
            BlockOom oom;
            oom.time_ns = e.time_ns;
            oom.device = device;
            oom.stream = e.stream;
            oom.requested = e.size;
            oom.device_free = e.device_free;
            oom.stack = e.stack_id;
            oom.released_before = d.released_since_alloc;
            oom.space = measure(device, 10);
            ooms_.push_back(std::move(oom));
        }
        return true;
    }
    return false;
}

void BlockTracker::addFolded(const format::SiteTotals& folded) {
    DeviceTotals& t = totals_[folded.device];
    addSaturating(t.allocations, folded.allocations);
    addSaturating(t.frees, folded.allocations);
    Charge c;
    c.process = process_;
    c.stack = folded.stack;
    c.device = folded.device;
    c.kind = format::Kind::Block;
    c.bytes = folded.bytes;
    accounting_.addFolded(c, folded.allocations);
}

void BlockTracker::alloc(Device& d, DeviceTotals& t, const format::Event& e, uint32_t phase) {
    const uint64_t a = e.address;
    if (auto it = d.blocks.find(a); it != d.blocks.end()) {
        ++unmatched_; // its free is not in the trace
        endBlock(d, it, e.device, e.time_ns);
    }
    // The block is carved from the start of a free block: from `a` to the next block or the
    // segment's end. PyTorch splits it or hands out all of it (allocator_rules.h).
    auto segment = segmentAt(d, a);
    const bool in_segment = segment != d.segments.end();
    uint64_t free_end = 0;
    bool overlaps = false;
    if (!in_segment) {
        ++unmatched_;
    } else {
        auto next = d.blocks.lower_bound(a);
        free_end = next != d.blocks.end() ? std::min(next->first, segment->second.end)
                                          : segment->second.end;
        overlaps = next != d.blocks.begin() && std::prev(next)->second.end > a;
    }
    AllocatorRules::Carved carved = rules_.carve(
        a, e.size, in_segment, free_end, in_segment && segment->second.expandable, overlaps);
    if (e.flags & format::kFlagBlockSized) {
        // An aggregated trace: rebuilt by the recorder while every block around it was known.
        carved = {e.actual_size, (e.flags & format::kFlagBlockEstimated) == 0};
    }
    const uint64_t bytes = carved.bytes;
    const bool exact = carved.exact;
    estimated_ += exact ? 0 : 1;
    Block b;
    b.end = saturatingAdd(a, bytes);
    b.requested = e.size;
    b.stream = e.stream;
    b.time_ns = e.time_ns;
    b.stack = e.stack_id;
    b.phase = phase;
    b.site = accounting_.add(charge(b, a, e.device), e.time_ns);
    d.blocks.emplace(a, b);
    d.released_since_alloc = 0;
    addSaturating(t.allocated, bytes);
    ++t.allocations;
    if (t.allocated > t.allocated_peak.bytes) {
        t.allocated_peak = {t.allocated, e.time_ns};
    }
}

void BlockTracker::freeRequested(Device& d, DeviceTotals& t, const format::Event& e) {
    auto it = d.blocks.find(e.address);
    if (it == d.blocks.end() || !it->second.allocated) {
        ++unmatched_; // allocated before the tracker was attached
        return;
    }
    Block& b = it->second;
    const uint64_t bytes = b.end - it->first;
    b.allocated = false;
    t.allocated -= std::min(t.allocated, bytes);
    ++t.frees;
    if (b.counted) {
        accounting_.remove(charge(b, it->first, e.device), e.time_ns);
        b.counted = false;
    }
    if (e.flags & format::kFlagInterpreterExiting) {
        SiteLive& s = exit_freed_[b.stack];
        addSaturating(s.bytes, bytes);
        ++s.allocations;
    }
}

void BlockTracker::addSegment(Device& d, DeviceTotals& t, const format::Event& e, bool expandable) {
    const uint64_t a = e.address;
    const uint64_t end = saturatingAdd(a, e.size);
    addSaturating(t.reserved, e.size);
    if (t.reserved > t.reserved_peak.bytes) {
        t.reserved_peak = {t.reserved, e.time_ns};
    }
    if (!expandable) {
        d.segments[a] = Segment{end, e.stream, false};
        return;
    }
    // A range mapped into an expandable segment joins the mapped ranges it touches.
    auto before = a > 0 ? segmentAt(d, a - 1) : d.segments.end();
    uint64_t start = a;
    if (before != d.segments.end() && before->second.expandable && before->second.end == a) {
        start = before->first;
    }
    uint64_t stop = end;
    auto after = d.segments.find(end);
    if (after != d.segments.end() && after->second.expandable) {
        stop = after->second.end;
        d.segments.erase(after);
    }
    d.segments[start] = Segment{stop, e.stream, true};
}

void BlockTracker::removeSegment(Device& d, DeviceTotals& t, const format::Event& e,
                                 bool expandable) {
    const uint64_t a = e.address;
    const uint64_t end = saturatingAdd(a, e.size);
    auto segment = segmentAt(d, a);
    if (segment == d.segments.end()) {
        ++unmatched_;
        return;
    }
    t.reserved -= std::min(t.reserved, e.size);
    addSaturating(d.released_since_alloc, e.size);
    // Blocks are never in memory given back; a trace missing their frees ends them here.
    for (auto it = d.blocks.lower_bound(a); it != d.blocks.end() && it->first < end;) {
        ++unmatched_;
        auto next = std::next(it);
        endBlock(d, it, e.device, e.time_ns);
        it = next;
    }
    const uint64_t start = segment->first;
    const Segment s = segment->second;
    d.segments.erase(segment);
    if (expandable) {
        if (start < a) {
            d.segments[start] = Segment{a, s.stream, true};
        }
        if (end < s.end) {
            d.segments[end] = Segment{s.end, s.stream, true};
        }
    }
}

void BlockTracker::releaseAll(uint64_t time_ns) {
    gate();
    accounting_.beginRemovals();
    for (auto& [device, d] : devices_) {
        for (auto& [address, b] : d.blocks) {
            if (b.counted) {
                accounting_.remove(charge(b, address, device), time_ns);
                b.counted = false;
            }
        }
    }
    accounting_.endRemovals(time_ns);
}

void BlockTracker::finish() {
    for (auto& [device, d] : devices_) {
        for (auto& [address, b] : d.blocks) {
            if (!b.allocated) {
                continue;
            }
            LeakGroup& g =
                leaks_[LeakKey{b.stack, format::Kind::Block, format::Api::Unknown, false, b.phase}];
            addSaturating(g.bytes, b.end - address);
            ++g.allocations;
            addSaturating(g.bytes_by_device[device], b.end - address);
        }
    }
}

std::vector<BlockTracker::BlockView> BlockTracker::blocksIn(int device, uint64_t address,
                                                            uint64_t bytes) const {
    std::vector<BlockView> out;
    const auto d = devices_.find(device);
    if (d == devices_.end()) {
        return out;
    }
    const uint64_t end = saturatingAdd(address, bytes);
    for (auto it = d->second.blocks.lower_bound(address);
         it != d->second.blocks.end() && it->first < end; ++it) {
        const Block& b = it->second;
        out.push_back({it->first, b.end - it->first, b.requested, b.stream, b.stack, b.allocated});
    }
    return out;
}

std::vector<BlockTracker::SegmentView> BlockTracker::segments(int device) const {
    std::vector<SegmentView> out;
    if (const auto d = devices_.find(device); d != devices_.end()) {
        for (const auto& [address, seg] : d->second.segments) {
            out.push_back({address, seg.end - address, seg.stream, seg.expandable});
        }
    }
    return out;
}

std::vector<int> BlockTracker::devices() const {
    std::vector<int> out;
    for (const auto& [device, d] : devices_) {
        if (!d.segments.empty() || !d.blocks.empty()) {
            out.push_back(device);
        }
    }
    return out;
}

size_t BlockTracker::walkSize() const {
    size_t n = 0;
    for (const auto& [device, d] : devices_) {
        n += d.segments.size() + d.blocks.size();
    }
    return n;
}

InsideSegments BlockTracker::measure(int device, size_t top) const {
    InsideSegments m;
    m.device = device;
    auto dit = devices_.find(device);
    if (dit == devices_.end()) {
        return m;
    }
    const Device& d = dit->second;
    std::map<uint64_t, StreamSpaceReport> streams;
    std::vector<SegmentSpaceReport> segments;
    for (const auto& [start, s] : d.segments) {
        SegmentSpaceReport seg;
        seg.address = start;
        seg.bytes = s.end - start;
        seg.stream = s.stream;
        seg.expandable = s.expandable;
        // Free blocks, as PyTorch's merged free blocks are: (start, bytes).
        std::vector<std::pair<uint64_t, uint64_t>> pieces;
        uint64_t cursor = start;
        bool any_block = false;
        for (auto it = d.blocks.lower_bound(start); it != d.blocks.end() && it->first < s.end;
             ++it) {
            any_block = true;
            if (it->first > cursor) {
                pieces.emplace_back(cursor, it->first - cursor);
            }
            cursor = std::max(cursor, std::min(it->second.end, s.end));
            const uint64_t bytes = it->second.end - it->first;
            addSaturating(m.active_bytes, bytes);
            if (it->second.allocated) {
                addSaturating(seg.allocated_bytes, bytes);
                addSaturating(m.requested_bytes, it->second.requested);
            }
        }
        if (cursor < s.end) {
            pieces.emplace_back(cursor, s.end - cursor);
        }
        constexpr uint64_t kPage = 2 << 20;
        for (const auto& [at, p] : pieces) {
            const uint64_t first_page = at / kPage + (at % kPage != 0 ? 1 : 0);
            const uint64_t end_page = saturatingAdd(at, p) / kPage;
            addSaturating(m.free_whole_pages,
                          end_page > first_page ? (end_page - first_page) * kPage : 0);
            addSaturating(seg.free_bytes, p);
            seg.largest_free_bytes = std::max(seg.largest_free_bytes, p);
            // PyTorch counts inactive split blocks outside expandable segments only.
            if (any_block && !s.expandable) {
                ++m.inactive_split_blocks;
                addSaturating(m.inactive_split_bytes, p);
            }
        }
        if (!any_block) {
            addSaturating(m.releasable_bytes, seg.bytes);
        }
        addSaturating(m.reserved_bytes, seg.bytes);
        addSaturating(m.allocated_bytes, seg.allocated_bytes);
        addSaturating(m.free_bytes, seg.free_bytes);
        m.largest_free_bytes = std::max(m.largest_free_bytes, seg.largest_free_bytes);
        StreamSpaceReport& st = streams[s.stream];
        st.stream = s.stream;
        addSaturating(st.reserved_bytes, seg.bytes);
        addSaturating(st.allocated_bytes, seg.allocated_bytes);
        addSaturating(st.free_bytes, seg.free_bytes);
        st.largest_free_bytes = std::max(st.largest_free_bytes, seg.largest_free_bytes);
        segments.push_back(seg);
    }
    for (const auto& [stream, st] : streams) {
        m.streams.push_back(st);
    }
    m.reserved_unallocated_bytes = m.reserved_bytes - std::min(m.reserved_bytes, m.allocated_bytes);
    m.segment_count = segments.size();
    const size_t kept = std::min(top, segments.size());
    std::partial_sort(segments.begin(), segments.begin() + static_cast<ptrdiff_t>(kept),
                      segments.end(), [](const SegmentSpaceReport& a, const SegmentSpaceReport& b) {
                          return a.free_bytes != b.free_bytes ? a.free_bytes > b.free_bytes
                                                              : a.address < b.address;
                      });
    segments.resize(kept);
    m.segments = std::move(segments);
    return m;
}

} // namespace gmt::analyzer
