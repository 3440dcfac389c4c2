#include "event_clock.h"

#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace gmt::preload {
namespace {

struct Sample {
    uint64_t tsc = 0;
    uint64_t ns = 0;
};

bool g_capable = false;
Sample g_origin;
std::atomic<bool> g_fitting{false};

// A slope fitted over less than this is too uncertain (samples jitter by ~100 ns).
constexpr uint64_t kMinBaselineNs = 2'000'000;
// The line slews towards CLOCK_MONOTONIC so as to meet it this much later...
constexpr int64_t kSlewHorizonNs = 50'000'000;
// ...changing its slope by at most 1/kMaxSlewDivisor; further behind than kMaxLagNs, it
// jumps forward instead (the process was stopped, or the first slope was poor).
constexpr int64_t kMaxSlewDivisor = 1000;
constexpr int64_t kMaxLagNs = 1'000'000;

#if defined(__x86_64__)
// The pair with the tightest bracket of three: the TSC halfway through the clock read.
Sample sample() {
    Sample best;
    uint64_t best_gap = ~uint64_t{0};
    for (int i = 0; i < 3; ++i) {
        uint64_t t1 = __rdtsc();
        uint64_t ns = nowNs(CLOCK_MONOTONIC);
        uint64_t t2 = __rdtsc();
        if (t2 - t1 < best_gap) {
            best_gap = t2 - t1;
            best = {t1 + (t2 - t1) / 2, ns};
        }
    }
    return best;
}

// The kernel keeps CLOCK_MONOTONIC with the TSC only when it found the TSC synchronized
// across CPUs and stable; then so may we.
bool kernelUsesTsc() {
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                  O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    char buf[16] = {};
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    return n >= 3 && std::memcmp(buf, "tsc", 3) == 0 && (n == 3 || buf[3] == '\n');
}

bool invariantTsc() {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(0x80000007, &eax, &ebx, &ecx, &edx)) {
        return false;
    }
    return (edx & (1u << 8)) != 0;
}
#endif

} // namespace

void EventClock::init() {
#if defined(__x86_64__)
    g_capable = invariantTsc() && kernelUsesTsc();
    if (g_capable) {
        g_origin = sample();
    }
#endif
}

void EventClock::calibrate() {
#if defined(__x86_64__)
    if (!g_capable || g_fitting.exchange(true, std::memory_order_acquire)) {
        return;
    }
    const Sample s = sample();
    const uint64_t dn = s.ns - g_origin.ns;
    const uint64_t dt = s.tsc - g_origin.tsc;
    if (s.ns > g_origin.ns && s.tsc > g_origin.tsc && dn >= kMinBaselineNs) {
        // ns per tick in 32.32 fixed point, over everything since load.
        const auto slope = static_cast<int64_t>((static_cast<unsigned __int128>(dn) << 32) / dt);
        uint64_t base_ns = s.ns;
        int64_t mult = slope;
        if (tsc_.load(std::memory_order_relaxed)) {
            const uint64_t at = scale(s.tsc, tsc_base_.load(std::memory_order_relaxed),
                                      ns_base_.load(std::memory_order_relaxed),
                                      mult_.load(std::memory_order_relaxed));
            const auto lag = static_cast<int64_t>(s.ns - at); // > 0: the line is behind
            if (lag <= kMaxLagNs) {
                // Continue from where the line stands; only the slope changes.
                base_ns = at;
                auto adjust =
                    static_cast<int64_t>(static_cast<__int128>(slope) * lag / kSlewHorizonNs);
                const int64_t limit = slope / kMaxSlewDivisor;
                mult = slope + std::max(-limit, std::min(limit, adjust));
            }
        }
        const uint32_t q = seq_.load(std::memory_order_relaxed);
        seq_.store(q + 1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_release);
        tsc_base_.store(s.tsc, std::memory_order_relaxed);
        ns_base_.store(base_ns, std::memory_order_relaxed);
        mult_.store(static_cast<uint64_t>(mult), std::memory_order_relaxed);
        seq_.store(q + 2, std::memory_order_release);
        tsc_.store(true, std::memory_order_relaxed);
    }
    g_fitting.store(false, std::memory_order_release);
#endif
}

void EventClock::afterForkChild() {
    // The parent's writer may have been fitting at the moment of fork.
    g_fitting.store(false, std::memory_order_relaxed);
}

} // namespace gmt::preload
