#include "analysis/whatif/allocator_model.h"

#include <algorithm>

namespace gmt::analyzer {

namespace {

// An expandable segment's address space: more than any device holds and twice the largest
// request (kMaxRequestBytes), so that one segment per stream and pool never runs out of it.
constexpr uint64_t kVirtualBytes = uint64_t{1} << 40;

uint64_t roundUp(uint64_t v, uint64_t step) {
    return (v + step - 1) / step * step;
}

} // namespace

AllocatorModel::AllocatorModel(const ModelPolicy& policy, std::optional<uint64_t> capacity)
    : policy_(policy), capacity_(capacity) {
    small_.small = true;
    if (policy_.one_pool) {
        // One pool, every block splits down to 512 bytes, nothing is ever oversize.
        policy_.rules.max_split_size = UINT64_MAX;
        policy_.rules.garbage_collection_threshold = 0;
    }
}

bool AllocatorModel::apply(const Request& r, size_t index) {
    switch (r.kind) {
    case RequestKind::Alloc:
        if (!alloc(r, index)) {
            return false;
        }
        break;
    case RequestKind::FreeRequested:
        freeRequested(r.id);
        break;
    case RequestKind::FreeCompleted:
        freeCompleted(r.id);
        break;
    case RequestKind::Release:
        releaseAll();
        break;
    case RequestKind::Attempt: {
        // Served under this setting: held for no longer than the request itself.
        Request held = r;
        held.id = kAttemptId;
        if (!alloc(held, index)) {
            return false;
        }
        noteChange(r.time_ns);
        freeRequested(kAttemptId);
        freeCompleted(kAttemptId);
        break;
    }
    }
    noteChange(r.time_ns);
    return true;
}

void AllocatorModel::noteChange(uint64_t time_ns) {
    ModelFigures& f = figures_;
    const uint64_t unused = f.reserved_bytes - std::min(f.reserved_bytes, f.allocated_bytes);
    if (f.reserved_bytes > f.peak_reserved_bytes) {
        f.peak_reserved_bytes = f.reserved_bytes;
        f.peak_reserved_time_ns = time_ns;
        f.fragmentation_bytes = unused;
    } else if (f.reserved_bytes == f.peak_reserved_bytes) {
        f.fragmentation_bytes = std::min(f.fragmentation_bytes, unused);
    }
    f.peak_allocated_bytes = std::max(f.peak_allocated_bytes, f.allocated_bytes);
}

bool AllocatorModel::alloc(const Request& r, size_t index) {
    const AllocatorRules& rules = policy_.rules;
    const uint64_t size = rules.roundSize(r.size);
    const uint32_t stream = streamOf(r.stream);
    Pool& pool = poolOf(smallRequest(size));
    // Garbage collection ages cached blocks by the searches of their pool, and runs only
    // against a limit (PyTorch's per-process memory fraction; here the capacity).
    const bool collecting = capacity_ && rules.garbage_collection_threshold > 0;
    if (collecting && !pool.small) {
        ++pool.searches;
    }
    std::optional<BlockIt> found = bestFit(pool, stream, size);
    if (!found) {
        if (collecting) {
            collectGarbage();
        }
        found = newBlock(pool, stream, size);
        if (!found && releaseOversize(pool, stream, size)) {
            found = newBlock(pool, stream, size);
        }
        if (!found && releaseAll()) {
            found = newBlock(pool, stream, size);
        }
    }
    if (!found) {
        ModelOom o;
        o.request_index = index;
        o.requested_bytes = r.size;
        o.time_ns = r.time_ns;
        o.stack = r.stack;
        o.stream = r.stream;
        o.reserved_bytes = figures_.reserved_bytes;
        o.allocated_bytes = figures_.allocated_bytes;
        oom_ = o;
        return false;
    }
    const BlockIt it = *found; // out of the free set
    Block& b = it->second;
    if (rules.splits(b.size, size, segments_[b.segment].expandable)) {
        Block rest = b;
        rest.size = b.size - size;
        b.size = size;
        cache(blocks_.emplace(it->first + size, rest).first);
    }
    b.allocated = true;
    b.id = r.id;
    live_[r.id] = it->first;
    figures_.allocated_bytes += b.size;
    return true;
}

void AllocatorModel::freeRequested(uint32_t id) {
    auto live = live_.find(id);
    if (live == live_.end()) {
        return;
    }
    auto it = blocks_.find(live->second);
    if (it == blocks_.end() || !it->second.allocated) {
        return;
    }
    it->second.allocated = false;
    it->second.pending = true;
    pending_.insert(it->first);
    figures_.allocated_bytes -= std::min(figures_.allocated_bytes, it->second.size);
}

void AllocatorModel::freeCompleted(uint32_t id) {
    auto live = live_.find(id);
    if (live == live_.end()) {
        return; // completed already, when the cache was given back
    }
    auto it = blocks_.find(live->second);
    live_.erase(live);
    if (it == blocks_.end() || !it->second.pending) {
        return;
    }
    it->second.pending = false;
    pending_.erase(it->first);
    cache(mergeFree(it));
}

std::optional<AllocatorModel::BlockIt> AllocatorModel::bestFit(Pool& pool, uint32_t stream,
                                                               uint64_t size) {
    auto key = pool.free.lower_bound({stream, size, 0});
    if (key == pool.free.end() || key->stream != stream) {
        return std::nullopt;
    }
    if (expandable()) {
        // A block at the end of the mapped part can grow into the unmapped pages after it:
        // best fit counts those too, so a larger block that grows less may fit better.
        auto reach = [&](const FreeKey& k) {
            auto next = nextOf(blocks_.find(k.address));
            return k.size + (next && !(*next)->second.mapped ? (*next)->second.size : 0);
        };
        for (auto next = std::next(key);
             next != pool.free.end() && next->stream == stream && reach(*next) < reach(*key);
             ++next) {
            key = next;
        }
    }
    if (!policy_.one_pool) {
        // An oversize block serves only an oversize request, and only one it fits closely.
        if (!oversize(size) && oversize(key->size)) {
            return std::nullopt;
        }
        if (oversize(size) && key->size >= size + AllocatorRules::kLargeBuffer) {
            return std::nullopt;
        }
    }
    const BlockIt it = blocks_.find(key->address);
    pool.free.erase(key);
    return it;
}

std::optional<AllocatorModel::BlockIt> AllocatorModel::newBlock(Pool& pool, uint32_t stream,
                                                                uint64_t size) {
    if (expandable()) {
        return grow(pool, stream, size);
    }
    const uint64_t bytes = AllocatorRules::segmentSize(size);
    if (capacity_ && figures_.reserved_bytes + bytes > *capacity_) {
        return std::nullopt;
    }
    Segment s;
    s.address = next_address_;
    s.size = bytes;
    next_address_ += bytes;
    Block b;
    b.size = bytes;
    b.segment = uint32_t(segments_.size());
    b.stream = stream;
    b.small = pool.small;
    segments_.push_back(s);
    figures_.reserved_bytes += bytes;
    ++figures_.cuda_malloc_calls;
    return blocks_.emplace(s.address, b).first;
}

std::optional<AllocatorModel::BlockIt> AllocatorModel::grow(Pool& pool, uint32_t stream,
                                                            uint64_t size) {
    // PyTorch checks its limit (the per-process memory fraction) once, before it grows an
    // expandable segment, against the size a new segment would have had — not the pages it
    // then maps (c10/cuda/CUDACachingAllocator.cpp: alloc_block compares
    // total_allocated_memory + p.alloc_size, get_allocation_size's value, with
    // allowed_memory_maximum, then try_allocate_expandable_block maps p.size() rounded up to
    // whole pages without checking again). So the pages mapped may take it past the limit by
    // less than a page (a 12 MiB request maps a 20 MiB page), and a request the free end of
    // a segment almost holds is refused when the whole request would not fit below it.
    if (capacity_ && !policy_.one_pool &&
        figures_.reserved_bytes + AllocatorRules::segmentSize(size) > *capacity_) {
        return std::nullopt;
    }
    // Free address space enough for `size` from `b` on: free blocks, mapped or not.
    auto room = [&](BlockIt b) {
        uint64_t bytes = 0;
        for (std::optional<BlockIt> at = b; at && bytes < size && isFree(*at); at = nextOf(*at)) {
            bytes += (*at)->second.size;
        }
        return bytes >= size;
    };
    std::optional<BlockIt> start;
    for (auto u = pool.unmapped.lower_bound({stream, 0});
         u != pool.unmapped.end() && u->first == stream; ++u) {
        BlockIt c = blocks_.find(u->second);
        if (auto prev = prevOf(c); prev && isFree(*prev)) {
            c = *prev; // the free mapped block just before it grows into it
        }
        if (room(c)) {
            start = c;
            break;
        }
    }
    if (!start) {
        Segment s;
        s.address = next_address_;
        s.expandable = true;
        s.page = policy_.one_pool
                     ? policy_.page_bytes
                     : (pool.small ? AllocatorRules::kSmallBuffer : AllocatorRules::kLargeBuffer);
        s.size = roundUp(kVirtualBytes, s.page);
        next_address_ += s.size;
        Block b;
        b.size = s.size;
        b.segment = uint32_t(segments_.size());
        b.stream = stream;
        b.small = pool.small;
        b.mapped = false;
        segments_.push_back(s);
        start = blocks_.emplace(s.address, b).first;
        cache(*start);
    }
    BlockIt c = *start;
    if (!c->second.mapped) {
        auto m = map(c, std::min(c->second.size, size));
        if (!m) {
            return std::nullopt;
        }
        c = *m;
    }
    while (c->second.size < size) {
        auto next = nextOf(c);
        if (!next || (*next)->second.mapped) {
            return std::nullopt; // cannot happen: room() saw free space up to `size`
        }
        auto m = map(*next, std::min(size - c->second.size, (*next)->second.size));
        if (!m) {
            return std::nullopt;
        }
        c = *m;
    }
    uncache(c);
    return c;
}

std::optional<AllocatorModel::BlockIt> AllocatorModel::map(BlockIt it, uint64_t bytes) {
    const Segment& s = segments_[it->second.segment];
    const uint64_t mapped = std::min(roundUp(bytes, s.page), it->second.size);
    // The stream-ordered pool's pages count against the capacity as they are mapped, all or
    // none; the caching allocator checked its limit before growing (grow()).
    if (capacity_ && policy_.one_pool && figures_.reserved_bytes + mapped > *capacity_) {
        return std::nullopt;
    }
    uncache(it);
    Block& b = it->second;
    if (mapped < b.size) {
        Block rest = b;
        rest.size = b.size - mapped;
        cache(blocks_.emplace(it->first + mapped, rest).first);
        b.size = mapped;
    }
    b.mapped = true;
    figures_.reserved_bytes += mapped;
    ++figures_.cuda_malloc_calls;
    const BlockIt merged = mergeFree(it);
    cache(merged);
    return merged;
}

void AllocatorModel::unmap(BlockIt it) {
    const Segment s = segments_[it->second.segment];
    const uint64_t address = it->first, end_address = it->first + it->second.size;
    const uint64_t begin = s.address + roundUp(address - s.address, s.page);
    const uint64_t end = s.address + (end_address - s.address) / s.page * s.page;
    if (begin >= end) {
        return;
    }
    uncache(it);
    const Block whole = it->second;
    BlockIt pages = it;
    if (begin > address) {
        it->second.size = begin - address;
        cache(it);
        pages = blocks_.emplace(begin, whole).first;
    }
    pages->second.size = end - begin;
    pages->second.mapped = false;
    if (end < end_address) {
        Block after = whole;
        after.size = end_address - end;
        cache(blocks_.emplace(end, after).first);
    }
    figures_.reserved_bytes -= std::min(figures_.reserved_bytes, end - begin);
    ++figures_.cuda_free_calls;
    const BlockIt merged = mergeFree(pages);
    if (merged->first == s.address && merged->second.size == s.size) {
        blocks_.erase(merged); // wholly unmapped: its address space is given back too
        return;
    }
    cache(merged);
}

bool AllocatorModel::releaseOversize(Pool& pool, uint32_t stream, uint64_t size) {
    const uint64_t max_split = policy_.rules.max_split_size;
    if (policy_.one_pool || max_split == UINT64_MAX) {
        return false;
    }
    const uint64_t wanted = std::max(size, max_split);
    auto key = pool.free.lower_bound({stream, wanted, 0});
    if (key != pool.free.end() && key->stream == stream) {
        const BlockIt it = blocks_.find(key->address);
        if (!segments_[it->second.segment].expandable) {
            if (!wholeSegment(it)) {
                return false;
            }
            releaseSegment(it); // one cached block large enough
            return true;
        }
    }
    // None is: give back oversize blocks of the stream, the largest first, until enough.
    if (key == pool.free.begin()) {
        return false;
    }
    uint64_t released = 0;
    --key;
    while (released < wanted && key->size >= max_split && key->stream == stream) {
        const auto current = key;
        const bool first = current == pool.free.begin();
        if (!first) {
            --key;
        }
        const BlockIt it = blocks_.find(current->address);
        if (!segments_[it->second.segment].expandable && wholeSegment(it)) {
            released += it->second.size;
            releaseSegment(it);
        }
        if (first) {
            break;
        }
    }
    return released >= wanted;
}

bool AllocatorModel::releaseAll() {
    // First every pending free completes (PyTorch waits for the streams' events).
    for (const uint64_t address : pending_) {
        const BlockIt it = blocks_.find(address);
        live_.erase(it->second.id);
        it->second.pending = false;
        cache(mergeFree(it));
    }
    pending_.clear();
    for (Pool* pool : {&large_, &small_}) {
        std::vector<uint64_t> whole, expandable_blocks;
        for (const FreeKey& k : pool->free) {
            const BlockIt it = blocks_.find(k.address);
            if (segments_[it->second.segment].expandable) {
                expandable_blocks.push_back(k.address);
            } else if (wholeSegment(it)) {
                whole.push_back(k.address);
            }
        }
        for (const uint64_t address : whole) {
            releaseSegment(blocks_.find(address));
        }
        for (const uint64_t address : expandable_blocks) {
            const BlockIt it = blocks_.find(address);
            if (it != blocks_.end() && isFree(it) && it->second.mapped) {
                unmap(it);
            }
        }
    }
    return true;
}

void AllocatorModel::collectGarbage() {
    const double limit =
        policy_.rules.garbage_collection_threshold * static_cast<double>(*capacity_);
    if (static_cast<double>(figures_.reserved_bytes) <= limit) {
        return;
    }
    const double target = static_cast<double>(figures_.reserved_bytes) - limit;
    auto freeable = [&](BlockIt it) {
        return !segments_[it->second.segment].expandable && wholeSegment(it);
    };
    uint64_t total_age = 0, count = 0;
    for (const FreeKey& k : large_.free) {
        const BlockIt it = blocks_.find(k.address);
        if (freeable(it)) {
            total_age += large_.searches - it->second.gc_base;
            ++count;
        }
    }
    // The oldest blocks first: those at least as old as the average, again until enough.
    double reclaimed = 0;
    bool freed = true;
    while (reclaimed < target && freed && count > 0) {
        const double average = static_cast<double>(total_age) / static_cast<double>(count);
        freed = false;
        for (auto k = large_.free.begin(); k != large_.free.end();) {
            const auto current = k++;
            const BlockIt it = blocks_.find(current->address);
            const uint64_t age = large_.searches - it->second.gc_base;
            if (freeable(it) && static_cast<double>(age) >= average) {
                freed = true;
                reclaimed += static_cast<double>(it->second.size);
                total_age -= age;
                --count;
                releaseSegment(it);
            }
        }
    }
}

std::optional<AllocatorModel::BlockIt> AllocatorModel::prevOf(BlockIt it) {
    if (it == blocks_.begin()) {
        return std::nullopt;
    }
    const BlockIt prev = std::prev(it);
    if (prev->second.segment != it->second.segment) {
        return std::nullopt;
    }
    return prev;
}

std::optional<AllocatorModel::BlockIt> AllocatorModel::nextOf(BlockIt it) {
    const BlockIt next = std::next(it);
    if (next == blocks_.end() || next->second.segment != it->second.segment) {
        return std::nullopt;
    }
    return next;
}

bool AllocatorModel::wholeSegment(BlockIt it) {
    const Segment& s = segments_[it->second.segment];
    return !s.expandable && it->first == s.address && it->second.size == s.size;
}

void AllocatorModel::cache(BlockIt it) {
    Block& b = it->second;
    Pool& pool = poolOf(b.small);
    if (b.mapped) {
        b.gc_base = pool.searches;
        pool.free.insert({b.stream, b.size, it->first});
    } else {
        pool.unmapped.insert({b.stream, it->first});
    }
}

void AllocatorModel::uncache(BlockIt it) {
    const Block& b = it->second;
    Pool& pool = poolOf(b.small);
    if (b.mapped) {
        pool.free.erase({b.stream, b.size, it->first});
    } else {
        pool.unmapped.erase({b.stream, it->first});
    }
}

// Merges a free block with its free neighbours (mapped with mapped, unmapped with
// unmapped), which leave the pool's sets; the block itself is in none.
AllocatorModel::BlockIt AllocatorModel::mergeFree(BlockIt it) {
    if (auto prev = prevOf(it);
        prev && isFree(*prev) && (*prev)->second.mapped == it->second.mapped) {
        uncache(*prev);
        (*prev)->second.size += it->second.size;
        blocks_.erase(it);
        it = *prev;
    }
    if (auto next = nextOf(it);
        next && isFree(*next) && (*next)->second.mapped == it->second.mapped) {
        uncache(*next);
        it->second.size += (*next)->second.size;
        blocks_.erase(*next);
    }
    return it;
}

void AllocatorModel::releaseSegment(BlockIt it) {
    uncache(it);
    figures_.reserved_bytes -= std::min(figures_.reserved_bytes, it->second.size);
    ++figures_.cuda_free_calls;
    blocks_.erase(it);
}

} // namespace gmt::analyzer
