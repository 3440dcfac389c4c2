// Lock-free multi-producer ring of fixed-size slots living in the trace file's shared
// mapping. Producers claim consecutive sequence positions with one atomic add, fill their
// slots and publish each by storing seq = position + 1 last (release). The single
// consumer (whoever holds the log writer's lock) takes positions strictly in order.
//
//        tail (consumed up to)            head (next claim)
//          v                                v
//   ... [ done | committed | claimed, being filled | committed ] ...   size = head - tail
//
// A position p may be claimed once p < tail + slots. In block mode a producer that finds
// the ring full first drains it itself, when nobody else is draining (on a busy machine the
// writer thread may wait long for a CPU, and the producer has one); otherwise it wakes the
// writer and sleeps on a futex that the consumer signals when it frees room (spinning
// producers would starve the writer of the CPU it needs). In drop mode it gives up and
// counts the loss in the prologue, where the count is as durable as the events.
//
// The common path of a claim is the atomic add and two compares: no lock, no system call,
// no other thread woken. The writer sleeps on a timer; a producer wakes it only when its
// claim crosses one of a few fixed points of the ring (16 per lap) while the ring is at
// least half full, which happens once per thousands of events, and only a writer that
// actually sleeps is woken. (Each wake costs the producer a system call and the writer a
// context switch: half full rather than earlier halves their number, and a producer that
// finds the ring full drains it itself anyway.)
//
// Sealing ends the sequence: a flag in `head` makes every later claim fail at once, so the
// positions below the seal are all there will be. The trace's end is written at the seal;
// a claim that comes later (another thread still running while the process exits) is a
// call made after the trace ended. A provisional seal (before execve) can be lifted again.
#pragma once

#include <gpumemtrace/format/ring_slot.h>

#include <atomic>
#include <cstdint>

namespace gmt::preload {

class RingBuffer {
  public:
    static constexpr uint64_t kNoPosition = ~uint64_t{0}; // dropped, or sealed
    // The consumer's side, for producers: wake the writer thread; drain here unless
    // somebody else is draining.
    struct Consumer {
        void (*wake)(void* ctx) = nullptr;
        void (*drain_here)(void* ctx) = nullptr;
        void* ctx = nullptr;
    };

    void attach(format::Slot* slots, uint32_t count, uint64_t* dropped_counter, bool drop,
                Consumer consumer);

    // Claims `n` consecutive positions; returns the first, or kNoPosition.
    uint64_t claim(uint32_t n) {
        if (!drop_) [[likely]] {
            const uint64_t pos = head_.fetch_add(n, std::memory_order_relaxed);
            if ((pos & kSealed) == 0 && pos + n - tail() <= count_ && !crossesWakePoint(pos, n))
                [[likely]] {
                return pos;
            }
            return claimSlow(pos, n);
        }
        return claimOrDrop(n);
    }
    format::Slot& at(uint64_t pos) { return slots_[pos & mask_]; }
    void commit(uint64_t pos) {
        std::atomic_ref<uint64_t>(at(pos).seq).store(pos + 1, std::memory_order_release);
    }
    void countDropped(uint64_t n) {
        std::atomic_ref<uint64_t>(*dropped_).fetch_add(n, std::memory_order_relaxed);
    }
    uint64_t dropped() const {
        return std::atomic_ref<uint64_t>(*dropped_).load(std::memory_order_relaxed);
    }

    bool committed(uint64_t pos) {
        return std::atomic_ref<uint64_t>(at(pos).seq).load(std::memory_order_acquire) == pos + 1;
    }
    uint64_t tail() const { return tail_.load(std::memory_order_acquire); }
    // Frees the ring up to `pos`, waking producers that wait for room.
    void setTail(uint64_t pos) {
        tail_.store(pos, std::memory_order_seq_cst);
        if (room_waiters_.load(std::memory_order_seq_cst) != 0) [[unlikely]] {
            wakeRoomWaiters();
        }
    }
    // Claimed but not yet consumed: what a sleeping writer would leave behind.
    uint64_t backlog() const { return (head_.load(std::memory_order_seq_cst) & ~kSealed) - tail(); }
    // Worth waking the writer for (the same test the producers make at a wake point).
    bool wantsDrain() const { return backlog() >= wakeBacklog(); }
    uint32_t slots() const { return count_; }

    // Ends the sequence and returns where: every position below was claimed before, none
    // at or above ever will be. With `count_late`, claims after the seal count as dropped
    // events (the trace goes on after a failed execve, or stopped on a write error).
    uint64_t seal(bool count_late);
    // Lifts a seal; returns the next position to be claimed. Positions between the seal
    // and it were never handed out: the consumer must skip them.
    uint64_t unseal();
    bool sealed() const { return (head_.load(std::memory_order_acquire) & kSealed) != 0; }
    // Nothing will consume the ring any more (the log cannot be written): producers that
    // wait for room give up and count their event as dropped.
    void abandon() {
        abandoned_.store(true, std::memory_order_seq_cst);
        wakeRoomWaiters();
    }

  private:
    static constexpr uint64_t kSealed = uint64_t{1} << 63;
    static constexpr uint64_t kNotSealed = ~uint64_t{0};

    bool crossesWakePoint(uint64_t pos, uint32_t n) const {
        return ((pos - 1) & wake_mask_) != ((pos + n - 1) & wake_mask_);
    }
    uint64_t wakeBacklog() const { return count_ / 2; }
    uint64_t claimSlow(uint64_t pos, uint32_t n);
    uint64_t claimOrDrop(uint32_t n);
    uint64_t lateClaim();
    void wakeIfBehind(uint64_t end);
    void waitForRoom(uint64_t pos, uint32_t n);
    void wakeRoomWaiters();

    format::Slot* slots_ = nullptr;
    uint32_t count_ = 0;
    uint64_t mask_ = 0;
    uint64_t wake_mask_ = 0; // ~(kWakeStride - 1)
    uint64_t* dropped_ = nullptr;
    bool drop_ = false;
    Consumer consumer_;
    std::atomic<bool> count_late_{false};
    std::atomic<bool> abandoned_{false};
    std::atomic<uint64_t> sealed_at_{kNotSealed};
    alignas(64) std::atomic<uint64_t> head_{0};
    alignas(64) std::atomic<uint64_t> tail_{0};
    // Producers asleep waiting for room, and the futex word they sleep on.
    alignas(64) std::atomic<uint32_t> room_waiters_{0};
    std::atomic<uint32_t> room_seq_{0};
};

} // namespace gmt::preload
