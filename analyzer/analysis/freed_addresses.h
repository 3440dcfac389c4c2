// The addresses of allocations that ended, for telling a double free (or a free of what a
// teardown released) from a free of an address never allocated. Bounded: as a FIFO of
// kMaxRemembered addresses (by default), the oldest forgotten first — its address, even if
// it was freed again since: that is the rule.
//
// A free followed by an allocation at the same address (what a program allocating in a
// loop does) is the common case: the address freed last is kept aside and only stored
// when something else comes first, so that the pair costs no insertion and erasure of
// the map. Observably the same as storing it at once.
#pragma once

#include "base/flat_map.h"

#include <gpumemtrace/format/event.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace gmt::analyzer {

class FreedAddresses {
  public:
    static constexpr size_t kMaxRemembered = 1u << 20;

    struct Freed {
        uint32_t allocation_stack = 0;
        format::Api api = format::Api::Unknown;
        bool by_teardown = false;
        uint32_t gaps = 0; // gaps in the trace before the free
    };

    explicit FreedAddresses(size_t capacity = kMaxRemembered) : capacity_(capacity) {}

    // An allocation at `address` ended. Its facts come as separate values: a Freed built
    // by the caller from its fields, then read back whole (by reference, or packed into
    // registers), is a wide load of narrow stores just made, which stalls on store
    // forwarding, and every free comes here.
    void remember(uint64_t address, uint32_t allocation_stack, format::Api api, bool by_teardown,
                  uint32_t gaps);
    void remember(uint64_t address, const Freed& f) {
        remember(address, f.allocation_stack, f.api, f.by_teardown, f.gaps);
    }
    // An allocation was made at `address`: a free there is no double free any more.
    void forget(uint64_t address) {
        if (pending_ && pending_address_ == address) {
            pending_ = false;
            return;
        }
        map_.erase(address);
    }
    const Freed* find(uint64_t address) const {
        if (pending_ && pending_address_ == address) {
            return &pending_value_;
        }
        return map_.find(address);
    }

  private:
    void store();
    // Inline: every free past the first kMaxRemembered forgets the oldest address, which
    // is most often one an allocation forgot already (nothing to erase).
    void erase(uint64_t address) {
        if (pending_ && pending_address_ == address) {
            pending_ = false;
        } else if (!map_.empty()) {
            map_.erase(address);
        }
    }

    FlatMap<Freed> map_;
    // The last address remembered, not in map_ yet.
    bool pending_ = false;
    uint64_t pending_address_ = 0;
    Freed pending_value_;
    // Addresses in insertion order: a ring of capacity_ + 1 slots in fixed-size
    // chunks, allocated as it fills (no copying, no doubling overshoot).
    size_t capacity_;
    static constexpr size_t kChunk = 4096;
    std::vector<std::unique_ptr<uint64_t[]>> order_;
    size_t count_ = 0; // slots filled, until the ring is full
    size_t head_ = 0;
};

} // namespace gmt::analyzer
