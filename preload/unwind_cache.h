// Incremental stack walking for the non-GNU libunwind build (GMT_UNWIND_NONGNU).
//
// unw_backtrace re-walks every frame of every stack, although a recorder sees the same
// outer frames over and over: only the few innermost frames change between two CUDA calls.
// trace() walks with the exact rules of libunwind's fast tracer (x86-64 Gtrace.c: standard,
// realigned and signal frames; everything else is left to unw_backtrace), but remembers,
// per thread, the register state of every frame it walked and the stack words each step
// read. When the walk reaches a register state it has walked before, the rest of the chain
// is proven identical by re-reading just those words: the walker is a deterministic
// function of (register state, rule of the frame's ip, words read), so equal inputs give
// equal frames. See unwind_cache.cpp for the full argument.
//
// A thread keeps a few such stacks, one per kind of call site (Request::window): a program
// that alternates between two call sites (allocate here, free there) finds each one's
// previous stack intact, and verifies it instead of stepping the frames that differ.
// Each kind keeps several stacks (ways), told apart before the walk by what the caller
// already knows (Request::hint, and the stack pointer) and, where that is equal, by which
// one the live stack still holds: a training step that allocates through a dozen operators
// in turn finds each one's stack in its own way, instead of stepping the two dozen frames
// by which one operator's stack differs from the one before (chooseWay, unwind_cache.cpp).
// Which window a trace uses changes its cost only, never its result.
#pragma once

#include <cstdint>

namespace gmt::preload::unwind {

// Kinds of call site per thread (Request::window is taken modulo this), and the stacks
// remembered for each kind.
inline constexpr uint32_t kWindows = 4;
inline constexpr uint32_t kWays = 16;

struct Request {
    uint64_t* out;         // receives at most max_stored addresses, innermost first
    uint32_t max_stored;   //
    uint32_t max_walked;   // frames walked at most, skipped ones included (unw_backtrace's size)
    uintptr_t skip_lo = 0; // leading frames whose return address lies in [skip_lo, skip_hi)
    uintptr_t skip_hi = 0; // are walked but not stored
    uint64_t adjust = 0;   // subtracted from every stored address
    uint32_t window = 0;   // which kind of call site (any value; reduced modulo kWindows)
    uint64_t hint = 0;     // what tells apart the stacks of one kind before the walk (any
                           // value; equal stacks should have equal hints)
    struct Way* way = nullptr; // set on every return: which of the kind's stacks the trace
                               // took (see Way)
};

// Which remembered stack of its kind a trace took, and the serial of its result: a serial
// changes whenever the way's result is derived anew (a walk), so two traces of one thread and
// kind that report the same way and serial returned the same frames. A caller that keeps
// something per way (the stack table keeps the id it gave) may then reuse it without looking
// at the frames, even if it did not see every trace in between.
struct Way {
    static constexpr uint8_t kNone = 0xff; // no way: no frames wanted, or left to unw_backtrace
    uint8_t index = kNone;                 // below kWays
    uint64_t serial = 0;                   // never 0 for a way
};

// Walks the stack of trace()'s caller exactly as unw_backtrace(buf, max_walked) called from
// the same place would (out[0] is the return address into the caller's caller, ...), with
// the leading skip range dropped. Returns the number stored, or -1 when the stack holds a
// frame only libunwind's slow path can unwind (or the thread cannot use the cache: trace()
// re-entered from a signal handler, thread exiting, no memory); the caller must then use
// unw_backtrace itself.
[[gnu::noinline]] int trace(const Request& req);

// Per-thread counters, for tests and benchmarks.
struct Stats {
    uint64_t traces = 0;
    uint64_t fallbacks = 0;     // traces answered -1
    uint64_t steps = 0;         // frames stepped with unwind rules
    uint64_t reused = 0;        // frames taken from the cache after verification
    uint64_t rule_lookups = 0;  // rules derived through libunwind (cache misses)
    uint64_t verify_misses = 0; // cached chains that no longer matched the stack
    uint64_t way_seeds = 0;     // ways taken for a new stack, started from another's
    bool inherited = false;     // the thread's cache was an exited thread's (its rules kept)
};
Stats threadStats();

// Forgets the calling thread's cached stack and rules (tests: exercise the cold path).
void resetThreadCache();

// Tests: checks that the calling thread's cached stack is self-consistent (each frame's
// step, replayed with the recorded words, gives the next frame, wherever it matters).
// Returns an empty string, or what is wrong.
const char* checkThreadCache();

} // namespace gmt::preload::unwind
