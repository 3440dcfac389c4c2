// The recorder's stack table (preload/stack_table.h) out of host memory at each of its
// allocations in turn. It runs on the traced program's threads, in a library built without
// exceptions: a std::bad_alloc that left it would end the program. Every stack must still
// be written with the id its events carry.
//
// Its own executable: the global operator new fails on request (failing_allocations.h), which
// no other test binary should carry.
#include "failing_allocations.h"
#include "stack_table.h"

#include <catch2/catch.hpp>

#include <map>
#include <vector>

using namespace gmt::preload;
using namespace gmt::test;

namespace {

// What the table wrote: each id's frames. Reserved beforehand (the test's own thread
// allocates nothing of its own while memory is short).
struct Written {
    std::vector<std::vector<uint64_t>> frames; // by id
    long twice = 0;                            // an id written again
};

void emit(uint32_t id, const uint64_t* frames, uint32_t depth, void* ctx) {
    auto& w = *static_cast<Written*>(ctx);
    if (id >= w.frames.size()) {
        return; // cannot happen below: the check on ids fails instead
    }
    if (!w.frames[id].empty()) {
        ++w.twice;
    }
    w.frames[id].assign(frames, frames + depth);
}

constexpr uint32_t kDepth = 5;
constexpr uint32_t kStacks = 3000; // more than a thread's cache holds (1 024)

void stackOf(uint32_t n, uint64_t (&frames)[kDepth]) {
    for (uint32_t i = 0; i < kDepth; ++i) {
        frames[i] = 0x400000 + 0x10 * n + i;
    }
}

} // namespace

TEST_CASE("stacks out of memory: each still written under the id its events carry") {
    // One table, as in the recorder: the threads' caches belong to it (a new generation
    // at each reset empties them).
    StackTable table;
    long failed = 0;
    for (long allowed : kFirstFailures) {
        CAPTURE(allowed);
        table.reset();
        Written written;
        written.frames.resize(4 * kStacks + 2);
        for (auto& f : written.frames) {
            f.reserve(kDepth);
        }
        std::vector<uint32_t> ids(2 * kStacks);
        g_failed_allocations = 0;
        {
            Exhausted exhausted(Failing::TestThread, allowed);
            for (uint32_t round = 0; round < 2; ++round) { // each stack met twice
                for (uint32_t n = 0; n < kStacks; ++n) {
                    uint64_t frames[kDepth];
                    stackOf(n, frames);
                    ids[round * kStacks + n] = table.intern(frames, kDepth, &emit, &written, {});
                }
            }
        }
        failed += g_failed_allocations;
        // Every id names the frames it was given with.
        for (uint32_t k = 0; k < 2 * kStacks; ++k) {
            const uint32_t id = ids[k];
            REQUIRE(id > 0);
            REQUIRE(id < written.frames.size());
            uint64_t frames[kDepth];
            stackOf(k % kStacks, frames);
            REQUIRE(written.frames[id] == std::vector<uint64_t>(frames, frames + kDepth));
        }
        if (g_failed_allocations == 0) {
            // Memory enough: each stack written once, one id per stack.
            CHECK(written.twice == 0);
            for (uint32_t n = 0; n < kStacks; ++n) {
                CHECK(ids[n] == ids[kStacks + n]);
            }
        }
    }
    CHECK(failed > 0);
}
