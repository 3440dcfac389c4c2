// Lock-free multi-producer ring of fixed-size slots living in the trace file's shared
// mapping. Producers claim consecutive sequence positions with one atomic add, fill their
// slots and publish each by storing seq = position + 1 last (release). The single
// consumer (whoever holds the log writer's lock) takes positions strictly in order.
//
//        tail (consumed up to)            head (next claim)
//          v                                v
//   ... [ done | committed | claimed, being filled | committed ] ...   size = head - tail
//
// A position p may be claimed once p < tail + slots. In block mode a producer waits for
// that (waking the writer); in drop mode it gives up and counts the loss in the prologue,
// where the count is as durable as the events.
#pragma once

#include <gpumemtrace/trace_format.h>

#include <atomic>
#include <cstdint>

namespace gmt::preload {

class RingBuffer {
  public:
    static constexpr uint64_t kDropped = ~uint64_t{0};
    using WaitHook = void (*)(void* ctx); // called while a blocked producer waits

    void attach(format::Slot* slots, uint32_t count, uint64_t* dropped_counter, bool drop,
                WaitHook wait_hook, void* wait_ctx);

    // Claims `n` consecutive positions; returns the first, or kDropped.
    uint64_t claim(uint32_t n);
    format::Slot& at(uint64_t pos) { return slots_[pos & mask_]; }
    void commit(uint64_t pos) {
        std::atomic_ref<uint64_t>(at(pos).seq).store(pos + 1, std::memory_order_release);
    }
    void countDropped(uint64_t n) {
        std::atomic_ref<uint64_t>(*dropped_).fetch_add(n, std::memory_order_relaxed);
    }

    bool committed(uint64_t pos) {
        return std::atomic_ref<uint64_t>(at(pos).seq).load(std::memory_order_acquire) == pos + 1;
    }
    uint64_t tail() const { return tail_.load(std::memory_order_acquire); }
    void setTail(uint64_t pos) { tail_.store(pos, std::memory_order_release); }
    // More than half full: worth waking the writer early.
    bool pressing(uint64_t pos) const { return pos - tail() > count_ / 2; }

  private:
    format::Slot* slots_ = nullptr;
    uint32_t count_ = 0;
    uint64_t mask_ = 0;
    uint64_t* dropped_ = nullptr;
    bool drop_ = false;
    WaitHook wait_hook_ = nullptr;
    void* wait_ctx_ = nullptr;
    alignas(64) std::atomic<uint64_t> head_{0};
    alignas(64) std::atomic<uint64_t> tail_{0};
};

} // namespace gmt::preload
