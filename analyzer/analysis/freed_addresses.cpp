#include "analysis/freed_addresses.h"

namespace gmt::analyzer {

void FreedAddresses::store() {
    if (!pending_) {
        return;
    }
    pending_ = false;
    const uint64_t address = pending_address_;
    *map_.tryEmplace(address).first = pending_value_;
    // As a FIFO: push the address; past capacity_ entries, forget the oldest (from the
    // map: most often an allocation forgot it already, and there is nothing to erase).
    const size_t slots = capacity_ + 1;
    auto slot = [this](size_t i) -> uint64_t& { return order_[i / kChunk][i % kChunk]; };
    if (count_ < slots) {
        if (count_ % kChunk == 0) {
            order_.emplace_back(new uint64_t[kChunk]);
        }
        slot(count_++) = address;
        if (count_ == slots) {
            map_.erase(slot(0));
            head_ = 1;
        }
    } else {
        // Full: capacity_ entries from head_; the free slot is the one before it. Wrapped
        // by comparison, not `%`: slots is no power of two, and a division per free was a
        // measurable part of the per-event pass.
        const size_t tail = head_ + capacity_;
        slot(tail >= slots ? tail - slots : tail) = address;
        map_.erase(slot(head_));
        head_ = head_ + 1 == slots ? 0 : head_ + 1;
    }
}

void FreedAddresses::remember(uint64_t address, uint32_t allocation_stack, format::Api api,
                              bool by_teardown, uint32_t gaps) {
    auto set = [&](Freed& f) {
        f.allocation_stack = allocation_stack;
        f.api = api;
        f.by_teardown = by_teardown;
        f.gaps = gaps;
    };
    if (pending_ && pending_address_ == address) {
        set(pending_value_); // remembered again: still aside
        return;
    }
    store();
    if (Freed* known = map_.find(address)) {
        set(*known); // no new place in the FIFO
        return;
    }
    pending_ = true;
    pending_address_ = address;
    set(pending_value_);
}

} // namespace gmt::analyzer
