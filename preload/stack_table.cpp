#include "stack_table.h"

#include "out_of_memory.h"

#include <algorithm>

namespace gmt::preload {
namespace {

// The thread's ids of the stacks it saw, by the stacks' hashes: set-associative, so that a
// training step's hundred-odd distinct stacks stay in it instead of evicting each other (a
// miss takes the table's mutex, which every thread shares). 4 ways of 256 sets, 14 KiB.
constexpr uint32_t kCacheSets = 256;
constexpr uint32_t kCacheWays = 4;
// The last few stacks of the thread, compared frame by frame before anything is hashed:
// an allocation loop alternates between a handful of call sites (alloc, free), and a
// comparison that fails does so at the first frame or two.
constexpr uint32_t kRecent = 4;
constexpr uint32_t kRecentDepth = 64;

struct RecentStack {
    uint32_t depth;
    uint32_t id;
    uint64_t frames[kRecentDepth];
};

struct CacheSet {
    uint64_t hash[kCacheWays]; // 0: empty
    uint32_t id[kCacheWays];
    uint32_t next; // the way a miss fills next, in turn
};

struct ThreadCache {
    uint64_t generation;
    CacheSet sets[kCacheSets];
    RecentStack recent[kRecent];
    uint32_t next_recent;
    // The id last given to the frames of each site and way (StackTable::Origin).
    struct WayId {
        uint64_t serial; // 0: none yet
        uint64_t python;
        uint32_t id;
    };
    WayId by_way[StackTable::kSites][unwind::kWays];
};
thread_local ThreadCache t_cache __attribute__((tls_model("initial-exec")));

// Four independent multiply chains, so the CPU overlaps them; folded at the end.
uint64_t hashFrames(const uint64_t* frames, uint32_t depth) {
    constexpr uint64_t kMul = 0xff51afd7ed558ccdull;
    uint64_t lane[4] = {0x9e3779b97f4a7c15ull ^ depth, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull,
                        0x27d4eb2f165667c5ull};
    uint32_t i = 0;
    for (; i + 4 <= depth; i += 4) {
        for (uint32_t k = 0; k < 4; ++k) {
            uint64_t v = (lane[k] ^ frames[i + k]) * kMul;
            lane[k] = v ^ (v >> 29);
        }
    }
    for (; i < depth; ++i) {
        uint64_t v = (lane[0] ^ frames[i]) * kMul;
        lane[0] = v ^ (v >> 29);
    }
    uint64_t h = lane[0];
    for (uint32_t k = 1; k < 4; ++k) {
        h = (h ^ (lane[k] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2))) * kMul;
    }
    h ^= h >> 33;
    return h | 1; // 0 marks an empty cache entry
}

bool sameStack(const RecentStack& r, const uint64_t* frames, uint32_t depth) {
    if (r.depth != depth) {
        return false;
    }
    for (uint32_t i = 0; i < depth; ++i) {
        if (r.frames[i] != frames[i]) {
            return false;
        }
    }
    return true;
}

} // namespace

uint32_t StackTable::intern(const uint64_t* frames, uint32_t depth, EmitFn emit, void* ctx,
                            const Origin& origin) {
    if (depth == 0) {
        return 0;
    }
    uint64_t gen = generation_.load(std::memory_order_acquire);
    ThreadCache& cache = t_cache;
    if (cache.generation != gen) {
        for (CacheSet& set : cache.sets) {
            set = {};
        }
        for (RecentStack& r : cache.recent) {
            r.depth = 0;
        }
        for (auto& site : cache.by_way) {
            for (ThreadCache::WayId& way : site) {
                way.serial = 0;
            }
        }
        cache.generation = gen;
    }
    if (origin.site >= kSites || origin.way.index >= unwind::kWays || origin.native > depth) {
        return lookup(&cache, frames, depth, emit, ctx);
    }
    ThreadCache::WayId& last = cache.by_way[origin.site][origin.way.index];
    const uint64_t python = hashFrames(frames + origin.native, depth - origin.native);
    if (last.serial == origin.way.serial && last.python == python) {
        return last.id;
    }
    last = {origin.way.serial, python, lookup(&cache, frames, depth, emit, ctx)};
    return last.id;
}

uint32_t StackTable::lookup(ThreadCacheRef cache_ref, const uint64_t* frames, uint32_t depth,
                            EmitFn emit, void* ctx) {
    ThreadCache& cache = *static_cast<ThreadCache*>(cache_ref);
    if (depth <= kRecentDepth) {
        for (const RecentStack& r : cache.recent) {
            if (sameStack(r, frames, depth)) {
                return r.id;
            }
        }
    }
    const uint64_t h = hashFrames(frames, depth);
    CacheSet& set = cache.sets[(h >> 32) % kCacheSets];
    uint32_t id = 0;
    for (uint32_t way = 0; way < kCacheWays; ++way) {
        if (set.hash[way] == h) {
            id = set.id[way];
            break;
        }
    }
    if (id == 0) {
        std::lock_guard lock(mutex_);
        uint32_t known = 0;
        // Out of host memory the table cannot grow (an insertion that throws leaves it as
        // it was): the stack gets an id of its own, written with it, and again each time a
        // thread's cache no longer has it. The trace grows; nothing is lost.
        if (!withoutThrowing([&] { known = ids_.try_emplace(h, next_id_).first->second; }) ||
            known == next_id_) {
            known = next_id_++;
            emit(known, frames, depth, ctx);
        }
        id = known;
        const uint32_t way = set.next++ % kCacheWays;
        set.hash[way] = h;
        set.id[way] = id;
    }
    if (depth <= kRecentDepth) {
        RecentStack& r = cache.recent[cache.next_recent++ % kRecent];
        r.depth = depth;
        r.id = id;
        std::copy(frames, frames + depth, r.frames);
    }
    return id;
}

void StackTable::reset() {
    ids_.clear();
    next_id_ = 1;
    generation_.fetch_add(1, std::memory_order_acq_rel);
}

} // namespace gmt::preload
