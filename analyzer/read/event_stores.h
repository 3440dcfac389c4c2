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

#include <gpumemtrace/format/event_codec.h>

#include <cstdint>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace gmt::analyzer {

enum class EventStores {
    Cached,   // the decoding thread reads the batch itself
    Streamed, // another thread reads it: written around the cache
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

} // namespace gmt::analyzer
