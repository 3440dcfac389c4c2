#include "failing_allocations.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <thread>

namespace gmt::test {

std::atomic<long> g_failed_allocations{0};

namespace {

std::atomic<Failing> g_failing{Failing::Off};
std::atomic<long> g_allowed{0};             // allocations that still succeed
std::atomic<std::thread::id> g_test_thread; // other threads read it while one sets it

bool failsHere() {
    const Failing f = g_failing.load(std::memory_order_relaxed);
    if (f == Failing::Off) {
        return false;
    }
    const bool test_thread = std::this_thread::get_id() == g_test_thread.load();
    if ((f == Failing::OtherThreads && test_thread) || (f == Failing::TestThread && !test_thread)) {
        return false;
    }
    if (g_allowed.fetch_sub(1, std::memory_order_relaxed) > 0) {
        return false;
    }
    g_failed_allocations.fetch_add(1, std::memory_order_relaxed);
    return true;
}

} // namespace

Exhausted::Exhausted(Failing where, long allowed) {
    g_test_thread = std::this_thread::get_id();
    g_allowed = allowed;
    g_failing = where;
}

Exhausted::~Exhausted() {
    g_failing = Failing::Off;
}

} // namespace gmt::test

void* operator new(std::size_t n) {
    if (gmt::test::failsHere()) {
        throw std::bad_alloc();
    }
    if (void* p = std::malloc(n == 0 ? 1 : n)) {
        return p;
    }
    throw std::bad_alloc();
}

// The over-aligned ones too; libstdc++'s aligned delete frees with free().
void* operator new(std::size_t n, std::align_val_t align) {
    if (gmt::test::failsHere()) {
        throw std::bad_alloc();
    }
    const auto a = static_cast<std::size_t>(align);
    if (void* p = std::aligned_alloc(a, (std::max<std::size_t>(n, 1) + a - 1) / a * a)) {
        return p;
    }
    throw std::bad_alloc();
}
