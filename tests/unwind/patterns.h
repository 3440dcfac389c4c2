// Call patterns for the unwinder tests, in a shared library of their own: the recorder core
// linked into the test executable treats the whole executable as "the tracer" and leaves
// its frames out, so the frames worth comparing must live elsewhere.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gmt_unwind_test {

using Leaf = void (*)(void* ctx);

struct Plan {
    const uint8_t* ops; // one call frame shape per byte (patterns.cpp)
    size_t n;
    Leaf leaf; // runs at the bottom, and at some intermediate depths
    void* ctx;
    uint64_t seed;    // source of the junk some frames leave in rbp
    int extra_leaves; // budget for loops and intermediate leaves
};

// Runs the plan as nested calls of differently shaped frames: small, large, alloca (rbp
// based), junk rbp, realigned stack, frame pointer, two call sites, loops, and signal
// handlers on the same or an alternate stack continuing the plan.
void runPlan(Plan* plan);

// Handlers for the plan's signal frames (SIGUSR1: this stack, SIGUSR2: alternate stack).
void installSignalHandlers();
// An alternate signal stack for the calling thread; returns its memory (to free at exit).
void* setupAltStack();
void teardownAltStack(void* stack);

// Benchmarks: `depth` frames of recursion, then `leaf` once at the bottom.
void recurse(int depth, Leaf leaf, void* ctx);
// Benchmarks: `depth` frames of recursion, then a loop calling `step` from two call sites
// at different depths, alternately, until it returns false.
void recurseAlternating(int depth, bool (*step)(void*), void* ctx);

} // namespace gmt_unwind_test
