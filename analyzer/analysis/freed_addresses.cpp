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

} // namespace gmt::analyzer
