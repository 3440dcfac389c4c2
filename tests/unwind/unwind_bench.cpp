// Cost of one captured stack: captureStack() (the cached walk) against the previous
// captureStack (a full unw_backtrace per call), at the bottom of a recursion of `depth`
// frames in another module, capturing `depth` frames, as the recorder does with
// GPUMEMTRACE_STACK_DEPTH=depth.
//   BM_*Steady:      one call site, as in an allocation loop.
//   BM_*Alternating: two call sites at different depths, taking turns.
//   BM_CachedSteadyEvicted/DEPTH/KIB: one call site, with KiB of other memory read and written
//                    before each capture (the program's own work between two allocations),
//                    only the capture timed: what a capture costs once the thread's cached
//                    stack and the stack's own words have left the core's caches
//                    (docs/performance.md, "A capture between a program's own work").
#include <benchmark/benchmark.h>

#include "patterns.h"
#include "stack_capture.h"
#include "unwind_cache.h"

#include <gpumemtrace/trace_format.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <link.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace {

uintptr_t g_self_lo = 0, g_self_hi = 0;

void findSelf() {
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void*) {
            auto me = reinterpret_cast<uintptr_t>(&findSelf);
            uintptr_t lo = UINTPTR_MAX, hi = 0;
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                if (info->dlpi_phdr[i].p_type == PT_LOAD) {
                    uintptr_t s = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
                    lo = std::min(lo, s);
                    hi = std::max(hi, s + info->dlpi_phdr[i].p_memsz);
                }
            }
            if (me >= lo && me < hi) {
                g_self_lo = lo;
                g_self_hi = hi;
                return 1;
            }
            return 0;
        },
        nullptr);
}

// The previous captureStack, verbatim.
__attribute__((noinline)) uint32_t previousCapture(uint64_t* frames, uint32_t max_depth) {
    constexpr int kOwnFrames = 16;
    void* ips[gmt::format::kMaxStackDepth + kOwnFrames];
    int n = unw_backtrace(
        ips,
        static_cast<int>(std::min<uint32_t>(max_depth, gmt::format::kMaxStackDepth)) + kOwnFrames);
    int first = 0;
    while (first < n && reinterpret_cast<uintptr_t>(ips[first]) >= g_self_lo &&
           reinterpret_cast<uintptr_t>(ips[first]) < g_self_hi) {
        ++first;
    }
    uint32_t depth = 0;
    for (int i = first; i < n && depth < max_depth; ++i) {
        frames[depth++] = reinterpret_cast<uint64_t>(ips[i]) - 1;
    }
    return depth;
}

struct Ctx {
    benchmark::State* state;
    uint32_t depth;
    bool cached;
    uint64_t frames = 0;
    uint64_t captures = 0;
};

uint32_t capture(Ctx& c) {
    uint64_t frames[gmt::format::kMaxStackDepth];
    uint32_t n =
        c.cached ? gmt::preload::captureStack(frames, c.depth) : previousCapture(frames, c.depth);
    benchmark::DoNotOptimize(frames);
    benchmark::ClobberMemory();
    c.frames += n;
    ++c.captures;
    return n;
}

// Between two captures, g_evict_bytes of other memory are read and written (a line in every
// 64 bytes), as the program's own work between two allocations does to the caches; only the
// capture is timed, by the clock (whose own cost, about 30 ns, is in every figure: KIB 0
// shows it).
std::vector<uint64_t> g_evict;
uint64_t g_evict_bytes = 0;

void evict() {
    const size_t n = g_evict_bytes / sizeof(uint64_t);
    for (size_t i = 0; i < n; i += 8) {
        g_evict[i] += 1;
    }
    benchmark::ClobberMemory();
}

void evictedLeaf(void* p) {
    auto& c = *static_cast<Ctx*>(p);
    for (auto _ : *c.state) {
        evict();
        auto t0 = std::chrono::steady_clock::now();
        capture(c);
        auto t1 = std::chrono::steady_clock::now();
        c.state->SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    }
}

void steadyLeaf(void* p) {
    auto& c = *static_cast<Ctx*>(p);
    for (auto _ : *c.state) {
        capture(c);
    }
}

bool alternatingStep(void* p) {
    auto& c = *static_cast<Ctx*>(p);
    if (!c.state->KeepRunning()) {
        return false;
    }
    capture(c);
    return true;
}

void report(benchmark::State& state, const Ctx& c, const gmt::preload::unwind::Stats& before) {
    auto after = gmt::preload::unwind::threadStats();
    double n = static_cast<double>(std::max<uint64_t>(c.captures, 1));
    state.counters["frames"] = static_cast<double>(c.frames) / n;
    if (c.cached) {
        state.counters["stepped"] = static_cast<double>(after.steps - before.steps) / n;
        state.counters["fallbacks"] = static_cast<double>(after.fallbacks - before.fallbacks);
    }
}

enum class Pattern { Steady, Alternating, SteadyEvicted };

void run(benchmark::State& state, bool cached, Pattern pattern) {
    static bool init = [] {
        gmt::preload::initStackCapture();
        findSelf();
        return true;
    }();
    (void)init;
    Ctx c{&state, static_cast<uint32_t>(state.range(0)), cached};
    auto before = gmt::preload::unwind::threadStats();
    if (pattern == Pattern::Alternating) {
        gmt_unwind_test::recurseAlternating(static_cast<int>(c.depth), alternatingStep, &c);
    } else if (pattern == Pattern::SteadyEvicted) {
        g_evict_bytes = static_cast<uint64_t>(state.range(1)) << 10;
        g_evict.assign(g_evict_bytes / sizeof(uint64_t), 0);
        gmt_unwind_test::recurse(static_cast<int>(c.depth), evictedLeaf, &c);
    } else {
        gmt_unwind_test::recurse(static_cast<int>(c.depth), steadyLeaf, &c);
    }
    report(state, c, before);
}

void BM_CachedSteady(benchmark::State& state) {
    run(state, true, Pattern::Steady);
}
void BM_UnwBacktraceSteady(benchmark::State& state) {
    run(state, false, Pattern::Steady);
}
void BM_CachedAlternating(benchmark::State& state) {
    run(state, true, Pattern::Alternating);
}
void BM_UnwBacktraceAlternating(benchmark::State& state) {
    run(state, false, Pattern::Alternating);
}

void BM_CachedSteadyEvicted(benchmark::State& state) {
    run(state, true, Pattern::SteadyEvicted);
}

BENCHMARK(BM_CachedSteady)->Arg(16)->Arg(64);
BENCHMARK(BM_CachedSteadyEvicted)
    ->Args({64, 0})
    ->Args({64, 1024})
    ->Args({64, 4096})
    ->UseManualTime()
    ->Iterations(20000)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_UnwBacktraceSteady)->Arg(16)->Arg(64);
BENCHMARK(BM_CachedAlternating)->Arg(16)->Arg(64);
BENCHMARK(BM_UnwBacktraceAlternating)->Arg(16)->Arg(64);

} // namespace

BENCHMARK_MAIN();
