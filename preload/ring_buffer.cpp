#include "ring_buffer.h"

#include <sched.h>

namespace gmt::preload {

void RingBuffer::attach(format::Slot* slots, uint32_t count, uint64_t* dropped_counter, bool drop,
                        WaitHook wait_hook, void* wait_ctx) {
    slots_ = slots;
    count_ = count;
    mask_ = count - 1;
    dropped_ = dropped_counter;
    drop_ = drop;
    wait_hook_ = wait_hook;
    wait_ctx_ = wait_ctx;
    head_.store(0);
    tail_.store(0);
}

uint64_t RingBuffer::claim(uint32_t n) {
    if (n > count_) {
        countDropped(1);
        return kDropped;
    }
    if (drop_) {
        uint64_t pos = head_.load(std::memory_order_relaxed);
        do {
            if (pos + n - tail() > count_) {
                countDropped(1);
                if (wait_hook_) {
                    wait_hook_(wait_ctx_);
                }
                return kDropped;
            }
        } while (!head_.compare_exchange_weak(pos, pos + n, std::memory_order_acq_rel));
        return pos;
    }
    uint64_t pos = head_.fetch_add(n, std::memory_order_acq_rel);
    while (pos + n - tail() > count_) {
        if (wait_hook_) {
            wait_hook_(wait_ctx_);
        }
        sched_yield();
    }
    return pos;
}

} // namespace gmt::preload
