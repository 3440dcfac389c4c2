#include "stack_table.h"

namespace gmt::preload {
namespace {

constexpr uint32_t kCacheSize = 64;

struct ThreadCache {
    uint64_t generation;
    uint64_t hash[kCacheSize];
    uint32_t id[kCacheSize];
};
thread_local ThreadCache t_cache __attribute__((tls_model("initial-exec")));

uint64_t hashFrames(const uint64_t* frames, uint32_t depth) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ depth;
    for (uint32_t i = 0; i < depth; ++i) {
        h ^= frames[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 33;
    }
    return h | 1; // 0 marks an empty cache entry
}

} // namespace

uint32_t StackTable::intern(const uint64_t* frames, uint32_t depth, EmitFn emit, void* ctx) {
    if (depth == 0) {
        return 0;
    }
    uint64_t h = hashFrames(frames, depth);
    uint64_t gen = generation_.load(std::memory_order_acquire);
    ThreadCache& cache = t_cache;
    if (cache.generation != gen) {
        for (uint32_t i = 0; i < kCacheSize; ++i) {
            cache.hash[i] = 0;
        }
        cache.generation = gen;
    }
    uint32_t slot = static_cast<uint32_t>(h % kCacheSize);
    if (cache.hash[slot] == h) {
        return cache.id[slot];
    }
    uint32_t id;
    {
        std::lock_guard lock(mutex_);
        auto [it, inserted] = ids_.try_emplace(h, next_id_);
        if (inserted) {
            ++next_id_;
            emit(it->second, frames, depth, ctx);
        }
        id = it->second;
    }
    cache.hash[slot] = h;
    cache.id[slot] = id;
    return id;
}

void StackTable::reset() {
    ids_.clear();
    next_id_ = 1;
    generation_.fetch_add(1, std::memory_order_acq_rel);
}

} // namespace gmt::preload
