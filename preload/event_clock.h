// The clock of every event: CLOCK_MONOTONIC nanoseconds, read once per event.
//
// clock_gettime costs 20-35 ns even through the vDSO (it reads the TSC and then scales it
// with the kernel's parameters), a large part of what a traced call may cost. Where the
// kernel itself keeps time with the TSC (clocksource "tsc", an invariant TSC), an event
// reads the TSC and scales it with our own parameters instead: a seqlock-protected line
// (base TSC, base ns, ns per tick) that the writer thread re-fits to CLOCK_MONOTONIC at
// every wake-up, continuously (the line only changes slope at the point where it stands),
// so the events' times never jump and stay within microseconds of CLOCK_MONOTONIC.
// Everywhere else, and until the first fit, it is clock_gettime.
#pragma once

#include "clock.h"

#include <atomic>
#include <cstdint>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace gmt::preload {

class EventClock {
  public:
    // Remembers a first (TSC, CLOCK_MONOTONIC) pair and whether the TSC can be trusted. At
    // load time; cheap.
    static void init();
    // Fits the line to CLOCK_MONOTONIC and switches the events to it. Called by the writer
    // thread at every wake-up; returns quickly when too little time passed since init.
    static void calibrate();
    // A forked child fits the line with its own writer thread.
    static void afterForkChild();

    static uint64_t now() {
#if defined(__x86_64__)
        if (tsc_.load(std::memory_order_relaxed)) [[likely]] {
            for (;;) {
                const uint32_t s = seq_.load(std::memory_order_acquire);
                const uint64_t tsc_base = tsc_base_.load(std::memory_order_relaxed);
                const uint64_t ns_base = ns_base_.load(std::memory_order_relaxed);
                const uint64_t mult = mult_.load(std::memory_order_relaxed);
                std::atomic_thread_fence(std::memory_order_acquire);
                if ((s & 1) == 0 && seq_.load(std::memory_order_relaxed) == s) [[likely]] {
                    return scale(__rdtsc(), tsc_base, ns_base, mult);
                }
            }
        }
#endif
        return nowNs(CLOCK_MONOTONIC);
    }

  private:
    // ns = ns_base + (tsc - tsc_base) * mult / 2^32, the difference signed (another core's
    // TSC may lag the base by a few cycles).
    static uint64_t scale(uint64_t tsc, uint64_t tsc_base, uint64_t ns_base, uint64_t mult) {
        const auto d = static_cast<__int128>(static_cast<int64_t>(tsc - tsc_base));
        return ns_base + static_cast<uint64_t>((d * static_cast<__int128>(mult)) >> 32);
    }

    static inline std::atomic<bool> tsc_{false};
    static inline std::atomic<uint32_t> seq_{0};
    static inline std::atomic<uint64_t> tsc_base_{0};
    static inline std::atomic<uint64_t> ns_base_{0};
    static inline std::atomic<uint64_t> mult_{0};
};

} // namespace gmt::preload
