// How a decoded event is written into its batch: through the cache, or around it.
//
// A batch decoded by a worker is read by another thread, most often on another core. A
// plain store first takes the line from whichever core read that recycled memory last, and
// on a 2-core AMD EPYC guest the decoding worker spent four fifths of its time waiting for
// those lines (docs/performance.md, "Decoded events written around the cache"). A
// non-temporal store goes to memory without taking the line: the worker never waits, and
// the reading thread's prefetcher reads the batch back in order. The thread that decodes a
// batch for itself keeps plain stores: it reads them again at once, from its own cache.
#pragma once

#include <gpumemtrace/format/event.h>

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace gmt::analyzer {

enum class EventStores {
    Cached,   // the decoding thread reads the batch itself
    Streamed, // another thread reads it: written around the cache
};

// Writes `from` to `to` around the cache (a plain copy where there is no such store).
// finishStreaming() before the batch is handed on.
inline void streamEvent(format::Event& to, const format::Event& from) {
#if defined(__x86_64__)
    static_assert(sizeof(format::Event) % 8 == 0 && alignof(format::Event) == 8);
    auto* out = reinterpret_cast<long long*>(&to);
    long long word[sizeof(format::Event) / 8];
    std::memcpy(word, &from, sizeof word);
    for (size_t i = 0; i < sizeof word / 8; ++i) {
        _mm_stream_si64(out + i, word[i]);
    }
#else
    to = from;
#endif
}

// Orders the streamed stores before what follows. The lock that hands the batch on
// orders them too on x86; this says so where it matters.
inline void finishStreaming() {
#if defined(__x86_64__)
    _mm_sfence();
#endif
}

} // namespace gmt::analyzer
