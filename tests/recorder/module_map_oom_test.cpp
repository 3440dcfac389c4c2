// The recorder's list of loaded modules (preload/module_map.h) out of host memory at each of
// its allocations in turn. It is walked on the traced program's threads (at the first new
// stack after a dlopen), in a library built without exceptions: a std::bad_alloc that left
// it would end the program. A walk short of memory must write no module twice, and the next
// walk must write what it could not.
//
// Its own executable: the global operator new fails on request (failing_allocations.h), which
// no other test binary should carry.
#include "failing_allocations.h"
#include "module_map.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <utility>
#include <vector>

using namespace gmt::preload;
using namespace gmt::test;

namespace {

using Range = std::pair<uint64_t, uint64_t>;

// The ranges of the modules written, in order. Reserved beforehand: the test's own thread
// allocates nothing while memory is short.
struct Written {
    std::vector<Range> ranges;
    Written() { ranges.reserve(4096); }
};

void emit(const gmt::format::ModuleInfo& module, void* ctx) {
    auto& w = *static_cast<Written*>(ctx);
    if (w.ranges.size() < w.ranges.capacity()) {
        w.ranges.emplace_back(module.start, module.end);
    }
}

std::vector<Range> sorted(std::vector<Range> ranges) {
    std::sort(ranges.begin(), ranges.end());
    return ranges;
}

} // namespace

TEST_CASE("modules out of memory: none written twice, the next walk writes the rest") {
    Written everything;
    ModuleMap().refresh(&emit, &everything);
    const std::vector<Range> all = sorted(everything.ranges);
    REQUIRE(all.size() >= 3); // this program, libc and the loader at least
    REQUIRE(std::adjacent_find(all.begin(), all.end()) == all.end());

    long failed = 0;
    for (long allowed : kFirstFailures) {
        CAPTURE(allowed);
        ModuleMap map;
        Written written;
        g_failed_allocations = 0;
        {
            Exhausted exhausted(Failing::TestThread, allowed);
            map.refresh(&emit, &written);
        }
        const long failed_here = g_failed_allocations;
        failed += failed_here;
        const size_t during = written.ranges.size();
        if (failed_here > 0) {
            REQUIRE(during < all.size()); // the module it had no room for is not written yet
        }
        map.refresh(&emit, &written); // memory enough again
        REQUIRE(sorted(written.ranges) == all);
        map.refresh(&emit, &written); // nothing loaded since: nothing more
        REQUIRE(written.ranges.size() == all.size());
    }
    REQUIRE(failed > 0); // memory did run out
}
