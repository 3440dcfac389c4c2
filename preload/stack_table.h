// Interns call stacks: each distinct stack gets a small id and is written once. A
// per-thread set-associative cache answers the steady state (the same call sites over and
// over, a training step's hundred-odd among them) without a lock; a miss takes a mutex,
// after the unwinding is done.
// Stacks are identified by a 64-bit hash of their frames. Out of host memory for the table,
// a stack is written again under a new id instead (never an exception: out_of_memory.h).
#pragma once

#include "unwind_cache.h"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace gmt::preload {

class StackTable {
  public:
    // Called under the table's lock for a stack seen for the first time; must push the
    // stack record into the trace before returning, since events naming it follow.
    using EmitFn = void (*)(uint32_t id, const uint64_t* frames, uint32_t depth, void* ctx);

    static constexpr uint32_t kSites = 4;
    static constexpr uint32_t kNoSite = ~0u;

    // Where the frames came from: the captureStack site (below kSites, or kNoSite) and the
    // way and serial the unwinder reported for them, and how many of them are native (the
    // rest are Python frames). When the thread's previous id for that site and way was given
    // to frames of the same serial (so the same native frames: unwind::Way) and Python
    // frames of the same hash, it is the answer, with neither the native frames looked at
    // nor the whole stack hashed. The Python frames are compared by a 64-bit hash, as
    // whole stacks are in the table itself.
    struct Origin {
        uint32_t site = kNoSite;
        unwind::Way way;
        uint32_t native = 0;
    };
    uint32_t intern(const uint64_t* frames, uint32_t depth, EmitFn emit, void* ctx,
                    const Origin& origin);

    // A new trace (forked child): every stack must be written again.
    void reset();

    std::mutex& mutex() { return mutex_; }

  private:
    using ThreadCacheRef = void*; // the calling thread's cache (stack_table.cpp)
    uint32_t lookup(ThreadCacheRef cache, const uint64_t* frames, uint32_t depth, EmitFn emit,
                    void* ctx);

    std::mutex mutex_;
    std::unordered_map<uint64_t, uint32_t> ids_;
    uint32_t next_id_ = 1;
    std::atomic<uint64_t> generation_{1};
};

} // namespace gmt::preload
