// Which live allocations a teardown ends, found without walking the whole live set.
//
// CUDA's rules (docs/analysis.md): destroying a context ends everything allocated in it;
// resetting a device (cudaDeviceReset, primary context reset) ends what the device's
// primary contexts hold: allocations on the device, and pinned host memory allocated in
// a context known to be that device's primary. Contexts created with cuCtxCreate are not
// primary. Pool and VMM memory outlive both.
//
// Walking every live allocation per teardown made a program that creates and destroys
// many contexts while holding many allocations quadratic. Here live allocations are kept
// in intrusive lists, one per (context, device), with pinned host memory on device -1:
// a teardown takes whole lists. Indexes from context and from device to their lists are
// cleaned lazily (a stale entry is dropped when a teardown meets it), so that an
// allocation or a free costs O(1) and every teardown costs what it ends plus entries
// that were added once each.
#pragma once

#include "analysis/allocation.h"

#include <cstdint>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gmt::analyzer {

class TeardownIndex {
  public:
    TeardownIndex() = default;
    TeardownIndex(const TeardownIndex&) = delete;
    TeardownIndex& operator=(const TeardownIndex&) = delete;

    // A successful allocation in `context` on `device`, before it is stored: a context
    // seen allocating on a device, and not created with cuCtxCreate, is that device's
    // primary context.
    void learnContext(uint64_t context, int device) {
        // Inline: every allocation tells it, mostly what the one before told.
        if (context != 0 && device >= 0 &&
            !(context == learned_context_ && device == learned_device_)) {
            learnNewContext(context, device);
        }
    }
    // cuCtxCreate: the context is not primary, whatever it was before.
    void onContextCreated(uint64_t context);

    // Puts a stored allocation (at its final address in memory, its fields those of what
    // it now holds) in its list. Pool and VMM allocations are never ended by a teardown and
    // are in none. One already in its list stays where it is: the node freed last, reused in
    // place (Lifetimes), keeps the list of what it held until it is settled or reused, so an
    // allocation loop on one context neither unlinks nor relinks it. One in another list
    // moves.
    void link(Allocation& a) {
        if (a.kind == format::Kind::Pool || a.kind == format::Kind::Vmm) {
            unlink(a);
            return;
        }
        const Key key{a.context, a.device < 0 ? -1 : a.device};
        if (const auto* held = static_cast<const Bucket*>(a.teardown.bucket)) {
            if (held->key == key) {
                return;
            }
            unlink(a);
        }
        if (!last_bucket_ || !(last_key_ == key)) {
            findBucket(key);
        }
        Bucket& b = *last_bucket_;
        a.teardown.bucket = &b;
        a.teardown.prev = nullptr;
        a.teardown.next = b.head;
        if (b.head) {
            b.head->teardown.prev = &a;
        }
        b.head = &a;
    }
    // Removes it from its list (nothing if it is in none).
    void unlink(Allocation& a) {
        auto* b = static_cast<Bucket*>(a.teardown.bucket);
        if (!b) {
            return;
        }
        // An emptied bucket stays (an alloc/free loop would otherwise create and delete
        // one per pair); a teardown deletes it when it meets it.
        if (a.teardown.prev) {
            a.teardown.prev->teardown.next = a.teardown.next;
        } else {
            b->head = a.teardown.next;
        }
        if (a.teardown.next) {
            a.teardown.next->teardown.prev = a.teardown.prev;
        }
        a.teardown.clear();
    }

    // The allocations the teardown `e` ends, already unlinked, in no particular order.
    // A context teardown also makes the context unknown again.
    std::vector<Allocation*> take(const format::Event& e);

  private:
    struct Key {
        uint64_t context;
        int device; // -1: pinned host memory
        bool operator==(const Key&) const = default;
    };
    struct Bucket {
        Key key; // the one it is stored under, so a linked allocation knows its list's
        Allocation* head = nullptr;
    };
    struct KeyHash {
        size_t operator()(const Key& k) const {
            return std::hash<uint64_t>()(k.context * 0x9e3779b97f4a7c15ull ^
                                         static_cast<uint32_t>(k.device));
        }
    };

    Bucket* find(const Key& key);
    // Makes key's bucket (created if new) the last one.
    void findBucket(const Key& key);
    void learnNewContext(uint64_t context, int device);
    // Moves every allocation of the bucket into `out` and deletes the bucket.
    void takeBucket(const Key& key, std::vector<Allocation*>& out);
    void indexHost(uint64_t context, int device);

    std::unordered_map<Key, Bucket, KeyHash> buckets_;
    Key last_key_{0, 0};
    Bucket* last_bucket_ = nullptr; // buckets_[last_key_] (nodes do not move)
    // Possibly stale: a key here may have no bucket any more, or a bucket a teardown of
    // that kind no longer ends; each is checked when met.
    std::unordered_map<uint64_t, std::vector<int>> by_context_;     // context -> devices
    std::unordered_map<int, std::vector<uint64_t>> by_device_;      // device -> contexts
    std::unordered_map<int, std::vector<uint64_t>> host_by_device_; // primary's device -> contexts
    std::unordered_set<uint64_t> user_contexts_;                    // cuCtxCreate'd, alive
    std::unordered_map<uint64_t, int> context_device_;              // learned primary contexts
    // The last learnContext that did its work: told again, it has nothing to do (until a
    // context is created or torn down).
    uint64_t learned_context_ = 0;
    int learned_device_ = -1;
};

} // namespace gmt::analyzer
