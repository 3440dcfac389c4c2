// How a decoded event is written into its batch (through the cache, or around it), and
// how a loop over a batch asks for the events ahead of it.
//
// A batch decoded by a worker is read by another thread, most often on another core. A
// plain store first takes the line from whichever core read that recycled memory last, and
// on a 2-core AMD EPYC guest the decoding worker spent four fifths of its time waiting for
// those lines (docs/performance.md, "Decoded events written around the cache"). A
// non-temporal store goes to memory without taking the line: the worker never waits, and
// the reading thread reads the batch back in order, asking for it ahead (prefetchEventsAhead,
// below). The thread that decodes a batch for itself keeps plain stores: it reads them again
// at once, from its own cache. So do workers when there are two or more: they have time to
// wait for the lines, and the reading thread then finds the events in the cache
// (DecodePool::workerStores() says when).
#pragma once

#include <gpumemtrace/format/event_codec.h>

#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace gmt::analyzer {

enum class EventStores {
    Cached,   // the decoding thread reads the batch itself, or one of several workers wrote it
    Streamed, // the one worker writes it for another thread: around the cache
};

// format::decodeEventBody's word store for a batch another thread reads: each decoded word
// goes around the cache, straight from the register that holds it (a plain store where
// there is no such store). finishStreaming() before the batch is handed on.
//
// Not through a decoded copy on the stack: wide loads of words just stored wait for those
// stores to reach the cache, and the copy had to be zeroed first, which together were a
// third of the decoding worker's own code on the 2-core AMD EPYC guest.
struct StreamedWordStore {
    void operator()(unsigned char* event, int i, uint64_t word) const {
#if defined(__x86_64__)
        _mm_stream_si64(reinterpret_cast<long long*>(event) + i, static_cast<long long>(word));
#else
        format::PlainWordStore{}(event, i, word);
#endif
    }
};

// Orders the streamed stores before what follows. The lock that hands the batch on
// orders them too on x86; this says so where it matters.
inline void finishStreaming() {
#if defined(__x86_64__)
    _mm_sfence();
#endif
}

// Asks for the lines of the event a fixed distance ahead of `e`, for a loop that reads a
// batch's events in order: the reading thread's pass (Analysis::onPlainEvents) and a
// worker's corrections (rebaseFrames). Events written around the cache come from memory,
// whichever thread wrote them, and on the Intel Xeon hosts measured the hardware's own
// prefetching did not keep ahead of such a loop: its first load of each event waited for
// memory, and the reading thread's pass went a quarter faster on 2 cores with the lines
// asked for 2 KiB ahead (docs/performance.md, "Decoded events prefetched ahead"). An event
// (104 bytes) reaches into two or three 64-byte lines, so two are asked for per event, one
// line apart: together every line. A prefetch past the batch's end is harmless (it never
// faults).
inline void prefetchEventsAhead(const format::Event* e) {
    constexpr uintptr_t kAheadBytes = 2048;
    constexpr uintptr_t kLineBytes = 64;
    // As an integer: the address may lie past the array, where pointer arithmetic may not.
    const uintptr_t ahead = reinterpret_cast<uintptr_t>(e) + kAheadBytes;
    __builtin_prefetch(reinterpret_cast<const void*>(ahead));
    __builtin_prefetch(reinterpret_cast<const void*>(ahead + kLineBytes));
}

} // namespace gmt::analyzer
