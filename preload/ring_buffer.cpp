#include "ring_buffer.h"

#include <climits>
#include <ctime>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace gmt::preload {

namespace {
// Wake points per lap of the ring: a producer that crosses one looks at the backlog.
constexpr uint32_t kWakePointsPerLap = 16;
} // namespace

void RingBuffer::attach(format::Slot* slots, uint32_t count, uint64_t* dropped_counter, bool drop,
                        Consumer consumer) {
    slots_ = slots;
    count_ = count;
    mask_ = count - 1;
    wake_mask_ = ~(uint64_t{count / kWakePointsPerLap} - 1);
    dropped_ = dropped_counter;
    drop_ = drop;
    consumer_ = consumer;
    count_late_.store(false);
    sealed_at_.store(kNotSealed);
    abandoned_.store(false);
    room_waiters_.store(0);
    room_seq_.store(0);
    head_.store(0);
    tail_.store(0);
}

void RingBuffer::wakeIfBehind(uint64_t end) {
    if (end - tail() >= wakeBacklog() && consumer_.wake) {
        consumer_.wake(consumer_.ctx);
    }
}

uint64_t RingBuffer::lateClaim() {
    std::atomic_thread_fence(std::memory_order_acquire); // pairs with the seal's release
    if (count_late_.load(std::memory_order_relaxed)) {
        countDropped(1);
    }
    return kNoPosition;
}

uint64_t RingBuffer::claimSlow(uint64_t pos, uint32_t n) {
    if (pos & kSealed) {
        return lateClaim();
    }
    if (crossesWakePoint(pos, n)) {
        wakeIfBehind(pos + n);
    }
    if (pos + n - tail() > count_) {
        waitForRoom(pos, n);
        if (pos + n - tail() > count_) {
            // Nobody consumes any more (the log cannot be written): this event is lost,
            // and counted.
            countDropped(1);
            return kNoPosition;
        }
    }
    return pos;
}

// Block mode, ring full: drains here, or wakes the writer and sleeps until it has
// consumed enough (or has given up: abandon()).
void RingBuffer::waitForRoom(uint64_t pos, uint32_t n) {
    while (pos + n - tail() > count_ && !abandoned_.load(std::memory_order_acquire)) {
        if (consumer_.drain_here) {
            consumer_.drain_here(consumer_.ctx);
            if (pos + n - tail() <= count_) {
                return;
            }
        }
        if (consumer_.wake) {
            consumer_.wake(consumer_.ctx);
        }
        const uint32_t seq = room_seq_.load(std::memory_order_acquire);
        room_waiters_.fetch_add(1, std::memory_order_seq_cst);
        // Checked again after announcing ourselves: a consumer that moved the tail before
        // saw no waiter, and one that moves it after bumps room_seq_ (the wait returns).
        if (pos + n - tail() > count_ && !abandoned_.load(std::memory_order_acquire)) {
            // The timeout only guards against a consumer that never comes back.
            timespec ts{0, 20'000'000};
            syscall(SYS_futex, reinterpret_cast<uint32_t*>(&room_seq_), FUTEX_WAIT_PRIVATE, seq,
                    &ts, nullptr, 0);
        }
        room_waiters_.fetch_sub(1, std::memory_order_relaxed);
    }
}

void RingBuffer::wakeRoomWaiters() {
    room_seq_.fetch_add(1, std::memory_order_release);
    syscall(SYS_futex, reinterpret_cast<uint32_t*>(&room_seq_), FUTEX_WAKE_PRIVATE, INT_MAX,
            nullptr, nullptr, 0);
}

uint64_t RingBuffer::claimOrDrop(uint32_t n) {
    uint64_t pos = head_.load(std::memory_order_relaxed);
    do {
        if (pos & kSealed) {
            return lateClaim();
        }
        if (pos + n - tail() > count_) {
            countDropped(1);
            if (consumer_.wake) {
                consumer_.wake(consumer_.ctx);
            }
            return kNoPosition;
        }
    } while (!head_.compare_exchange_weak(pos, pos + n, std::memory_order_relaxed));
    if (crossesWakePoint(pos, n)) {
        wakeIfBehind(pos + n);
    }
    return pos;
}

uint64_t RingBuffer::seal(bool count_late) {
    if (count_late) {
        count_late_.store(true, std::memory_order_relaxed);
    }
    const uint64_t h = head_.fetch_or(kSealed, std::memory_order_acq_rel);
    if ((h & kSealed) == 0) {
        sealed_at_.store(h, std::memory_order_release);
        return h;
    }
    // Sealed already (the writer stopped on a write error, and now the process ends): the
    // first seal's position stands; its author publishes it right after its fetch_or.
    uint64_t at;
    while ((at = sealed_at_.load(std::memory_order_acquire)) == kNotSealed) {
        sched_yield();
    }
    return at;
}

uint64_t RingBuffer::unseal() {
    sealed_at_.store(kNotSealed, std::memory_order_relaxed);
    count_late_.store(false, std::memory_order_relaxed);
    return head_.fetch_and(~kSealed, std::memory_order_acq_rel) & ~kSealed;
}

} // namespace gmt::preload
