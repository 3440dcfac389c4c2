// Running out of memory on request, for tests of what code does when `new` throws
// std::bad_alloc (what a process under `ulimit -v` meets). Linking failing_allocations.cpp
// replaces the global operator new (plain and over-aligned) of the whole executable, so
// only a test binary of its own may use it: gmt_failing_allocations (tests/support).
#pragma once

#include <atomic>

namespace gmt::test {

// Whose allocations fail: the threads other than the one that made the Exhausted scope,
// that thread only, or all.
enum class Failing { Off, OtherThreads, TestThread, AllThreads };

// Memory runs out from the `allowed`-th allocation (0: the first) of the threads named, for
// the scope's life.
class Exhausted {
  public:
    Exhausted(Failing where, long allowed);
    ~Exhausted();
    Exhausted(const Exhausted&) = delete;
    Exhausted& operator=(const Exhausted&) = delete;
};

// Allocations failed since the count was last set to 0: whether a case tested anything.
extern std::atomic<long> g_failed_allocations;

// Where the first failure falls: the first allocations one by one, then further apart.
inline constexpr long kFirstFailures[] = {0, 1, 2, 3, 4, 5, 6, 8, 12, 20, 40, 100, 400, 2000};

} // namespace gmt::test
