// captureStack() (answered from preload/unwind_cache.cpp's per-thread cache) must give
// exactly the frames of a plain unw_backtrace from the same place, whatever ran before on the
// thread: random call patterns (frame shapes, recursion depths, loops, alternating call
// sites, signal handlers on this and an alternate stack, asynchronous signals), threads,
// fork, stacks deeper than the limit, and every max_depth of interest.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include "patterns.h"
#include "stack_capture.h"
#include "unwind_cache.h"

#include <gpumemtrace/trace_format.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <link.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using gmt::preload::captureStack;
using gmt_unwind_test::Plan;

constexpr uint32_t kMaxFrames = gmt::format::kMaxStackDepth + 16;

void ensureInit() {
    static std::once_flag once;
    std::call_once(once, [] {
        gmt::preload::initStackCapture();
        gmt_unwind_test::installSignalHandlers();
    });
}

// The previous captureStack: unw_backtrace, leading frames of this executable dropped.
__attribute__((noinline)) uint32_t referenceCapture(uint64_t* frames, uint32_t max_depth) {
    if (max_depth == 0) {
        return 0;
    }
    static uintptr_t lo = 0, hi = 0;
    if (hi == 0) {
        // Same range initStackCapture() found: this executable's loaded segments.
        dl_iterate_phdr(
            [](dl_phdr_info* info, size_t, void*) {
                auto me = reinterpret_cast<uintptr_t>(&referenceCapture);
                uintptr_t l = UINTPTR_MAX, h = 0;
                for (int i = 0; i < info->dlpi_phnum; ++i) {
                    if (info->dlpi_phdr[i].p_type == PT_LOAD) {
                        uintptr_t s = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
                        l = std::min(l, s);
                        h = std::max(h, s + info->dlpi_phdr[i].p_memsz);
                    }
                }
                if (me >= l && me < h) {
                    lo = l;
                    hi = h;
                    return 1;
                }
                return 0;
            },
            nullptr);
    }
    void* ips[kMaxFrames];
    int n = unw_backtrace(
        ips, static_cast<int>(std::min<uint32_t>(max_depth, gmt::format::kMaxStackDepth)) + 16);
    int first = 0;
    while (first < n && reinterpret_cast<uintptr_t>(ips[first]) >= lo &&
           reinterpret_cast<uintptr_t>(ips[first]) < hi) {
        ++first;
    }
    uint32_t depth = 0;
    for (int i = first; i < n && depth < max_depth; ++i) {
        frames[depth++] = reinterpret_cast<uint64_t>(ips[i]) - 1;
    }
    return depth;
}

struct Checker {
    std::vector<uint32_t> depths; // max_depth for each leaf, in turn
    size_t next = 0;
    bool raw = false;             // also compare unwind::trace() without skipping
    bool reset_sometimes = false; // drop the thread's cache now and then
    bool vary_ways = false;       // spread captures over sites and hints (ways, unwind_cache.h)
    uint64_t hint = 0;            // the hint of every capture otherwise
    uint64_t rng = 1;
    std::atomic<uint64_t> captures{0};
    std::atomic<uint64_t> serial_repeats{0}; // captures whose way and serial were seen before
    std::atomic<uint64_t> mismatches{0};
    std::atomic<uint64_t> frames{0};
    std::mutex mu;
    std::string first_failure;

    void fail(const char* what, uint32_t max_depth, const uint64_t* got, uint32_t n,
              const uint64_t* want, uint32_t m) {
        mismatches.fetch_add(1);
        std::lock_guard lock(mu);
        if (!first_failure.empty()) {
            return;
        }
        char line[128];
        std::snprintf(line, sizeof line, "%s max_depth=%u: got %u frames, want %u\n", what,
                      max_depth, n, m);
        first_failure = line;
        for (uint32_t i = 0; i < std::max(n, m); ++i) {
            std::snprintf(line, sizeof line, "  %3u %16" PRIx64 " %16" PRIx64 "%s\n", i,
                          i < n ? got[i] : 0, i < m ? want[i] : 0,
                          (i < n && i < m && got[i] == want[i]) ? "" : "  <--");
            first_failure += line;
        }
    }
};

// Each thread keeps its own position in the depth list.
thread_local size_t t_leaf_count = 0;

// The last frames each site's way reported, with their serial (unwind::Way).
struct LastOfWay {
    uint64_t serial = 0;
    std::vector<uint64_t> frames;
};
thread_local LastOfWay t_last_of_way[gmt::preload::kCaptureSites][gmt::preload::unwind::kWays];

// A way and serial seen before promise the frames given with them then (the stack table
// reuses its id on that promise), whatever traces ran in between (checkRaw's among them).
void checkSerial(Checker* c, uint32_t site, gmt::preload::unwind::Way way, const uint64_t* got,
                 uint32_t n, uint32_t max_depth) {
    using gmt::preload::unwind::Way;
    if (way.index == Way::kNone) {
        return;
    }
    if (way.index >= gmt::preload::unwind::kWays || way.serial == 0) {
        c->fail("a way out of range, or serial 0", max_depth, got, n, got, 0);
        return;
    }
    LastOfWay& last = t_last_of_way[site][way.index];
    if (last.serial == way.serial) {
        c->serial_repeats.fetch_add(1, std::memory_order_relaxed);
        if (!std::equal(got, got + n, last.frames.begin(), last.frames.end())) {
            c->fail("a way's serial came again with other frames", max_depth, got, n,
                    last.frames.data(), static_cast<uint32_t>(last.frames.size()));
        }
        return;
    }
    last.serial = way.serial;
    last.frames.assign(got, got + n);
}

__attribute__((noinline)) void checkRaw(Checker* c, uint32_t max_depth) {
    uint64_t got[kMaxFrames + 1];
    void* want[kMaxFrames + 1];
    gmt::preload::unwind::Request req{got, max_depth, max_depth};
    int n = gmt::preload::unwind::trace(req);
    int m = unw_backtrace(want, static_cast<int>(max_depth));
    if (n < 0) {
        return; // left to unw_backtrace by design
    }
    // Entry 0 is the return address into this function: two different call sites.
    bool same = n == m;
    for (int i = 1; same && i < n; ++i) {
        same = got[i] == reinterpret_cast<uint64_t>(want[i]);
    }
    if (!same) {
        uint64_t w[kMaxFrames + 1];
        for (int i = 0; i < m; ++i) {
            w[i] = reinterpret_cast<uint64_t>(want[i]);
        }
        c->fail("trace() vs unw_backtrace", max_depth, got, static_cast<uint32_t>(n), w,
                static_cast<uint32_t>(m));
    }
}

void checkLeaf(void* ctx) {
    auto* c = static_cast<Checker*>(ctx);
    uint32_t max_depth = c->depths[t_leaf_count++ % c->depths.size()];
    if (c->reset_sometimes && (t_leaf_count * 2654435761u) % 7 == 0) {
        gmt::preload::unwind::resetThreadCache();
    }
    uint64_t got[kMaxFrames];
    uint64_t want[kMaxFrames];
    uint32_t site = 0;
    uint64_t hint = c->hint;
    if (c->vary_ways) {
        const uint64_t mix = t_leaf_count * 0x9e3779b97f4a7c15ull;
        site = static_cast<uint32_t>(mix >> 62);
        hint = (mix >> 20) % 11;
    }
    gmt::preload::unwind::Way way;
    uint32_t n = captureStack(got, max_depth, site, hint, &way);
    uint32_t m = referenceCapture(want, max_depth);
    checkSerial(c, site, way, got, n, max_depth);
    c->captures.fetch_add(1, std::memory_order_relaxed);
    c->frames.fetch_add(n, std::memory_order_relaxed);
    if (n != m || !std::equal(got, got + n, want)) {
        c->fail("captureStack vs reference", max_depth, got, n, want, m);
    }
    if (const char* broken = gmt::preload::unwind::checkThreadCache(); broken[0]) {
        c->fail(broken, max_depth, got, n, want, m);
    }
    if (c->raw && max_depth > 0) {
        checkRaw(c, max_depth + 1);
    }
}

std::vector<uint8_t> randomOps(std::mt19937_64& rng, bool with_signals) {
    // Mostly short plans (the same few frames changing over a stable prefix), some deep.
    std::uniform_int_distribution<int> kind(0, 9);
    size_t len;
    switch (kind(rng)) {
    case 0:
        len = 150 + rng() % 200; // deeper than any limit
        break;
    case 1:
    case 2:
        len = 40 + rng() % 60;
        break;
    default:
        len = rng() % 24;
        break;
    }
    std::vector<uint8_t> ops(len);
    for (auto& op : ops) {
        op = static_cast<uint8_t>(rng());
        if (!with_signals && op % 11 == 8) {
            op = static_cast<uint8_t>(op - 8); // opPlain
        }
    }
    return ops;
}

// Runs plans where consecutive ones share prefixes: a base plan mutated at random depths.
void runPlans(Checker& c, uint64_t seed, int plans, bool with_signals) {
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> ops = randomOps(rng, with_signals);
    for (int i = 0; i < plans; ++i) {
        switch (rng() % 4) {
        case 0:
            ops = randomOps(rng, with_signals);
            break;
        case 1:
            if (!ops.empty()) { // change one frame somewhere
                uint8_t op = static_cast<uint8_t>(rng());
                if (!with_signals && op % 11 == 8) {
                    op = static_cast<uint8_t>(op - 8);
                }
                ops[rng() % ops.size()] = op;
            }
            break;
        case 2: // deeper or shallower at the bottom
            ops.resize(rng() % (ops.size() + 8));
            for (auto& op : ops) {
                if (!with_signals && op % 11 == 8) {
                    op = static_cast<uint8_t>(op - 8);
                }
            }
            break;
        default: // the same plan again: the steady loop
            break;
        }
        Plan plan{ops.data(), ops.size(), checkLeaf, &c, rng(), 3};
        gmt_unwind_test::runPlan(&plan);
    }
}

void requireClean(Checker& c) {
    auto st = gmt::preload::unwind::threadStats();
    INFO("this thread: traces " << st.traces << ", fallbacks " << st.fallbacks << ", stepped "
                                << st.steps << ", reused " << st.reused << ", rules derived "
                                << st.rule_lookups << ", verify misses " << st.verify_misses);
    INFO(c.first_failure);
    CHECK(c.captures.load() > 0);
    REQUIRE(c.mismatches.load() == 0);
}

} // namespace

TEST_CASE("max_depth 0 stores nothing") {
    ensureInit();
    uint64_t frames[4] = {1, 2, 3, 4};
    REQUIRE(captureStack(frames, 0) == 0);
    REQUIRE(frames[0] == 1);
}

TEST_CASE("random call patterns: same frames as unw_backtrace", "[unwind]") {
    ensureInit();
    void* alt = gmt_unwind_test::setupAltStack();
    for (uint32_t depth : {1u, 16u, 64u, 256u}) {
        Checker c;
        c.depths = {depth};
        c.raw = true;
        runPlans(c, 1000 + depth, 3000, true);
        INFO("max_depth " << depth << ", " << c.captures.load() << " captures");
        requireClean(c);
    }
    gmt_unwind_test::teardownAltStack(alt);
}

TEST_CASE("random call patterns through every site and many ways", "[unwind]") {
    // Ways are taken, seeded from another way and given back in every order.
    ensureInit();
    void* alt = gmt_unwind_test::setupAltStack();
    Checker c;
    c.depths = {64, 16, 256, 1};
    c.vary_ways = true;
    c.reset_sometimes = true;
    runPlans(c, 4242, 4000, true);
    gmt_unwind_test::teardownAltStack(alt);
    requireClean(c);
}

TEST_CASE("stacks of one depth, in turn, are each served from the cache", "[unwind]") {
    // As operators of a training step are: stacks of equal depth and frame sizes (so equal
    // stack pointers) that differ in the return addresses of their innermost frames, one
    // after another. Each finds its own way (unwind_cache.cpp, chooseWay), by its hint or,
    // with one hint for all, by its words, and is verified, not stepped; more stacks than a
    // kind has ways push each other out, and each then steps the frames that differ.
    ensureInit();
    auto plansOf = [](int count) {
        std::vector<std::vector<uint8_t>> plans;
        for (int k = 0; k < count; ++k) {
            std::vector<uint8_t> ops(40, 0); // plain frames
            for (int i = 0; i < 16; ++i) {
                // opTwoSites (4), on the side of bit (i % 5) of k: one of two return addresses
                // (so up to 32 stacks, all different).
                ops.push_back(static_cast<uint8_t>(4 + 11 * ((k >> (i % 5)) & 1)));
            }
            plans.push_back(std::move(ops));
        }
        return plans;
    };
    auto steps_per_trace = [&](int count, bool hinted) {
        const auto plans = plansOf(count);
        Checker c;
        c.depths = {64};
        auto run = [&](int rounds) {
            for (int r = 0; r < rounds; ++r) {
                for (int k = 0; k < count; ++k) {
                    c.hint = hinted ? static_cast<uint64_t>(k) + 1 : 0;
                    Plan plan{plans[k].data(), plans[k].size(), checkLeaf, &c, 1, 0};
                    gmt_unwind_test::runPlan(&plan);
                }
            }
        };
        gmt::preload::unwind::resetThreadCache();
        run(5);
        const auto before = gmt::preload::unwind::threadStats();
        run(50);
        const auto after = gmt::preload::unwind::threadStats();
        requireClean(c);
        const uint64_t traces = after.traces - before.traces;
        REQUIRE(traces == 50u * static_cast<uint64_t>(count));
        CHECK(after.fallbacks == before.fallbacks);
        return static_cast<double>(after.steps - before.steps) / static_cast<double>(traces);
    };
    static_assert(gmt::preload::unwind::kWays + 4 <= 32, "more stacks than plansOf makes");
    const int ways = static_cast<int>(gmt::preload::unwind::kWays);
    const double hinted = steps_per_trace(ways - 2, true);
    const double one_hint = steps_per_trace(ways - 2, false);
    const double too_many = steps_per_trace(ways + 4, false);
    INFO("frames stepped per trace: " << hinted << " with a hint per stack, " << one_hint
                                      << " with one hint, " << too_many << " for " << ways + 4
                                      << " stacks");
    CHECK(hinted <= 1.0);
    CHECK(one_hint <= 1.0);
    CHECK(too_many >= 8.0);
}

TEST_CASE("mixed max_depth and cold caches", "[unwind]") {
    ensureInit();
    void* alt = gmt_unwind_test::setupAltStack();
    Checker c;
    c.depths = {64, 0, 16, 256, 1, 64, 64, 200, 3};
    c.reset_sometimes = true;
    runPlans(c, 77, 4000, true);
    gmt_unwind_test::teardownAltStack(alt);
    requireClean(c);
}

TEST_CASE("many short histories from a cold cache", "[unwind]") {
    // Bugs in reusing the cache depend on what ran before: many different short histories.
    ensureInit();
    Checker c;
    c.depths = {64, 16, 256};
    for (uint64_t seed = 0; seed < 200; ++seed) {
        gmt::preload::unwind::resetThreadCache();
        runPlans(c, 100000 + seed, 500, false);
    }
    requireClean(c);
}

TEST_CASE("steady loop is served from the cache", "[unwind]") {
    ensureInit();
    Checker c;
    c.depths = {64};
    std::vector<uint8_t> ops(80, 0); // 80 plain frames: deeper than the limit
    for (int i = 0; i < 200; ++i) {
        Plan plan{ops.data(), ops.size(), checkLeaf, &c, 1, 0};
        gmt_unwind_test::runPlan(&plan);
    }
    auto before = gmt::preload::unwind::threadStats();
    for (int i = 0; i < 1000; ++i) {
        Plan plan{ops.data(), ops.size(), checkLeaf, &c, 1, 0};
        gmt_unwind_test::runPlan(&plan);
    }
    auto after = gmt::preload::unwind::threadStats();
    requireClean(c);
    uint64_t traces = after.traces - before.traces;
    INFO("traces " << traces << " steps " << after.steps - before.steps << " reused "
                   << after.reused - before.reused << " fallbacks "
                   << after.fallbacks - before.fallbacks);
    REQUIRE(traces == 1000);
    CHECK(after.fallbacks == before.fallbacks);
    CHECK(after.rule_lookups == before.rule_lookups);
    // Nearly every frame comes from the cache; only the few changed ones are stepped.
    CHECK(after.steps - before.steps <= 8 * traces);
    CHECK(after.reused - before.reused >= 60 * traces);
    // The same stack, traced again: the same way and serial (so the stack table's id is
    // reused), checked against the frames each time (checkSerial).
    INFO("captures that repeated their way's serial: " << c.serial_repeats.load());
    CHECK(c.serial_repeats.load() >= 1000);
}

TEST_CASE("threads: each thread's cache stays its own", "[unwind]") {
    ensureInit();
    Checker c;
    c.depths = {64, 16, 256, 1};
    c.raw = true;
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&c, t] {
            void* alt = gmt_unwind_test::setupAltStack();
            runPlans(c, 5000 + t, 1500, true);
            gmt_unwind_test::teardownAltStack(alt);
        });
    }
    for (auto& th : threads) {
        th.join();
    }
    requireClean(c);
}

TEST_CASE("threads that come and go: a cache passed on from an exited thread", "[unwind]") {
    // An exited thread's cache goes to a later thread (preload/unwind_cache.cpp, takeSpare),
    // with its rules and emptied windows: the later threads' stacks must be exactly
    // unw_backtrace's, and every thread after the first wave must have been given one. The
    // threads of a wave take their caches one at a time and exit one at a time, so that the
    // spare list's flag, which a thread only tries, is never found taken.
    ensureInit();
    Checker c;
    c.depths = {64, 16, 256};
    c.raw = true;
    constexpr int kWaves = 6, kPerWave = 3;
    std::atomic<int> inherited{0};
    for (int wave = 0; wave < kWaves; ++wave) {
        std::atomic<int> start_turn{0}, exit_turn{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < kPerWave; ++t) {
            threads.emplace_back([&, wave, t] {
                while (start_turn.load() != t) {
                    std::this_thread::yield();
                }
                uint64_t frames[8];
                captureStack(frames, 8); // takes this thread's cache
                inherited += gmt::preload::unwind::threadStats().inherited ? 1 : 0;
                start_turn.store(t + 1);
                runPlans(c, 9000 + wave * 10 + t, 400, false);
                while (exit_turn.load() != t) {
                    std::this_thread::yield();
                }
            });
        }
        for (int t = 0; t < kPerWave; ++t) {
            exit_turn.store(t);
            threads[t].join(); // its cache is given back before join returns
        }
    }
    requireClean(c);
    INFO("threads given an exited thread's cache: " << inherited.load());
    CHECK(inherited.load() >= (kWaves - 1) * kPerWave);
}

TEST_CASE("fork: the child walks its own copy correctly", "[unwind]") {
    ensureInit();
    Checker c;
    c.depths = {64, 256};
    runPlans(c, 31, 300, false); // warm this thread's cache
    requireClean(c);
    pid_t pid = fork();
    if (pid == 0) {
        Checker child;
        child.depths = {64, 16, 256};
        runPlans(child, 32, 1000, false);
        if (!child.first_failure.empty()) {
            std::fputs(child.first_failure.c_str(), stderr);
        }
        _exit(child.mismatches.load() == 0 && child.captures.load() > 0 ? 0 : 1);
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
}

namespace {

Checker* g_async = nullptr;
timer_t g_async_timer;
constexpr long kSliceNs = 150'000;  // between the end of one interrupt and the next
constexpr int kAsyncRounds = 20000; // rounds of 50 plans: the work, fixed
volatile sig_atomic_t g_plans_done = 0;
sig_atomic_t g_plans_seen = 0;
long g_delay_ns = kSliceNs;

// One-shot, re-armed by the handler when it is done: a periodic wall-clock timer
// outpaced a handler slowed down by a busy machine, and the interrupted loop never ran
// again. If no plan finished since the last interrupt (the thread was descheduled), the
// delay doubles until one does, so the loop always advances however loaded the machine.
void armAsyncTimer() {
    if (g_plans_done == g_plans_seen) {
        g_delay_ns = std::min(g_delay_ns * 2, 100'000'000L);
    } else {
        g_delay_ns = kSliceNs;
    }
    g_plans_seen = g_plans_done;
    itimerspec once{{0, 0}, {g_delay_ns / 1'000'000'000L, g_delay_ns % 1'000'000'000L}};
    timer_settime(g_async_timer, 0, &once, nullptr); // async-signal-safe
}

void onProf(int) {
    checkLeaf(g_async);
    armAsyncTimer();
}

void noLeaf(void*) {}

} // namespace

TEST_CASE("asynchronous signals: interrupted at any instruction", "[unwind]") {
    ensureInit();
    Checker c;
    c.depths = {64, 256, 16};
    c.raw = true;
    g_async = &c;
    struct sigaction sa {};
    sa.sa_handler = onProf;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, nullptr);
    // Interrupts land anywhere, prologues and epilogues included (see armAsyncTimer).
    sigevent sev{};
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = SIGPROF;
    REQUIRE(timer_create(CLOCK_MONOTONIC, &sev, &g_async_timer) == 0);
    g_plans_done = 0;
    g_plans_seen = -1;
    armAsyncTimer();
    // The interrupted code never unwinds itself: libunwind is not re-entrant.
    std::mt19937_64 rng(9);
    for (int round = 0; round < kAsyncRounds; ++round) {
        std::vector<uint8_t> ops = randomOps(rng, false);
        for (int rep = 0; rep < 50; ++rep) {
            Plan plan{ops.data(), ops.size(), noLeaf, nullptr, rng(), 3};
            gmt_unwind_test::runPlan(&plan);
            g_plans_done = g_plans_done + 1;
        }
    }
    timer_delete(g_async_timer);
    signal(SIGPROF, SIG_DFL);
    INFO(c.captures.load() << " interrupts checked");
    // Thousands land in this much work; a handful would mean the timer never ran.
    CHECK(c.captures.load() >= 100);
    requireClean(c);
}

// The history that exposed a stale rbp used when resuming after a cache miss (fixed).
TEST_CASE("regression: the fork test's history in one process", "[unwind]") {
    ensureInit();
    Checker c;
    c.depths = {64, 256};
    runPlans(c, 31, 300, false);
    Checker child;
    child.depths = {64, 16, 256};
    runPlans(child, 32, 1000, false);
    requireClean(child);
}
