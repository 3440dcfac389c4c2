#include "analysis/teardown_index.h"

#include <algorithm>

namespace gmt::analyzer {

using format::Kind;

namespace {

// Appends `value` to an index list whose stale entries are otherwise dropped only when a
// teardown reads it: past twice the number of buckets (an upper bound on its live
// entries) the list is cleaned of stale and repeated entries first, so it stays within a
// constant factor of what it indexes at O(1) amortised per entry.
template <typename T, typename Live>
void addEntry(std::vector<T>& list, T value, size_t buckets, Live&& live) {
    if (!list.empty() && list.back() == value) {
        return;
    }
    if (list.size() >= 2 * std::max<size_t>(buckets, 16)) {
        std::sort(list.begin(), list.end());
        list.erase(std::unique(list.begin(), list.end()), list.end());
        std::erase_if(list, [&](const T& v) { return !live(v); });
    }
    list.push_back(value);
}

} // namespace

void TeardownIndex::indexHost(uint64_t context, int device) {
    if (!buckets_.contains(Key{context, -1})) {
        return;
    }
    addEntry(host_by_device_[device], context, buckets_.size(), [&](uint64_t c) {
        auto cd = context_device_.find(c);
        return cd != context_device_.end() && cd->second == device && buckets_.contains(Key{c, -1});
    });
}

void TeardownIndex::learnNewContext(uint64_t context, int device) {
    learned_context_ = context;
    learned_device_ = device;
    if (user_contexts_.contains(context)) {
        return;
    }
    auto [it, inserted] = context_device_.try_emplace(context, device);
    if (!inserted && it->second == device) {
        return;
    }
    it->second = device;
    // Its pinned host memory now goes with this device.
    indexHost(context, device);
}

void TeardownIndex::onContextCreated(uint64_t context) {
    learned_context_ = 0;
    user_contexts_.insert(context);
    context_device_.erase(context);
}

TeardownIndex::Bucket* TeardownIndex::find(const Key& key) {
    auto it = buckets_.find(key);
    return it == buckets_.end() ? nullptr : &it->second;
}

void TeardownIndex::findBucket(const Key& key) {
    auto [it, inserted] = buckets_.try_emplace(key, Bucket{key});
    if (inserted) {
        const uint64_t context = key.context;
        const int device = key.device;
        if (context != 0) {
            addEntry(by_context_[context], device, buckets_.size(), [&](int d) {
                return buckets_.contains(Key{context, d});
            });
        }
        if (device >= 0) {
            addEntry(by_device_[device], context, buckets_.size(), [&](uint64_t c) {
                return buckets_.contains(Key{c, device});
            });
        } else if (auto cd = context_device_.find(context);
                   context != 0 && cd != context_device_.end()) {
            indexHost(context, cd->second);
        }
    }
    last_key_ = key;
    last_bucket_ = &it->second;
}

void TeardownIndex::takeBucket(const Key& key, std::vector<Allocation*>& out) {
    auto it = buckets_.find(key);
    if (it == buckets_.end()) {
        return;
    }
    for (Allocation* a = it->second.head; a;) {
        Allocation* next = a->teardown.next;
        a->teardown.clear();
        out.push_back(a);
        a = next;
    }
    if (last_bucket_ == &it->second) {
        last_bucket_ = nullptr;
    }
    buckets_.erase(it);
}

std::vector<Allocation*> TeardownIndex::take(const format::Event& e) {
    learned_context_ = 0;
    std::vector<Allocation*> out;
    if (e.context != 0) {
        // Everything allocated in the context, on any device.
        if (auto it = by_context_.find(e.context); it != by_context_.end()) {
            for (int device : it->second) {
                takeBucket(Key{e.context, device}, out);
            }
            by_context_.erase(it);
        }
        user_contexts_.erase(e.context);
        return out;
    }
    if (e.device < 0) {
        return out;
    }
    // The device's memory in every context that is not a user context. Every entry is
    // dropped: its bucket is taken, gone, or in a user context — which only a teardown of
    // that context makes primary again, taking the bucket, so a new allocation there
    // creates a new bucket and a new entry.
    if (auto it = by_device_.find(e.device); it != by_device_.end()) {
        std::vector<uint64_t> contexts = std::move(it->second);
        by_device_.erase(it);
        for (uint64_t context : contexts) {
            if (!user_contexts_.contains(context)) {
                takeBucket(Key{context, e.device}, out);
            }
        }
    }
    // Pinned host memory of the contexts that are this device's primary now. An entry
    // whose context moved to another device was indexed there when it moved.
    if (auto it = host_by_device_.find(e.device); it != host_by_device_.end()) {
        std::vector<uint64_t> contexts = std::move(it->second);
        host_by_device_.erase(it);
        for (uint64_t context : contexts) {
            auto cd = context_device_.find(context);
            if (!user_contexts_.contains(context) && cd != context_device_.end() &&
                cd->second == e.device) {
                takeBucket(Key{context, -1}, out);
            }
        }
    }
    return out;
}

} // namespace gmt::analyzer
