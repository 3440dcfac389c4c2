// The addresses of allocations that ended, for telling a double free (or a free of what a
// teardown released) from a free of an address never allocated. Bounded: a FIFO of
// kMaxRemembered addresses (by default) besides the one freed last, the oldest forgotten
// first — its address, even if it was freed again since: that is the rule.
//
// A free followed by an allocation at the same address (what a program allocating in a
// loop does) is the common case: the address freed last is kept aside, and takes its
// place in the map and in the FIFO only when another address is freed while it is still
// remembered. So the pair costs no insertion, no erasure and no FIFO slot: a free undone
// by an allocation at its address before any other free leaves no trace.
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
    // forwarding, and every free comes here. Inline for the same reason; most find nothing
    // pending (the allocation after the last free took its address again).
    void remember(uint64_t address, uint32_t allocation_stack, format::Api api, bool by_teardown,
                  uint32_t gaps) {
        Freed* f = &pending_value_;
        if (!pending_ || pending_address_ != address) {
            if (pending_) {
                store();
            }
            f = map_.find(address); // known: no new place in the FIFO
            if (!f) {
                pending_ = true;
                pending_address_ = address;
                f = &pending_value_;
            }
        } // else remembered again: still aside
        f->allocation_stack = allocation_stack;
        f->api = api;
        f->by_teardown = by_teardown;
        f->gaps = gaps;
    }
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
    // Moves the pending address into the map and the FIFO.
    void store();
    FlatMap<Freed> map_;
    // The last address remembered, in neither map_ nor the FIFO yet.
    bool pending_ = false;
    uint64_t pending_address_ = 0;
    Freed pending_value_;
    // Addresses in the order they were stored: a ring of capacity_ + 1 slots in
    // fixed-size chunks, allocated as it fills (no copying, no doubling overshoot).
    size_t capacity_;
    static constexpr size_t kChunk = 4096;
    std::vector<std::unique_ptr<uint64_t[]>> order_;
    size_t count_ = 0; // slots filled, until the ring is full
    size_t head_ = 0;
};

} // namespace gmt::analyzer
