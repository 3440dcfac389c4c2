// Contexts: each device's primary context, contexts made by cuCtxCreate, and every thread's
// stack of current contexts.
//
// Context objects are never deleted, only marked destroyed, so a stale handle stays safe to
// look at and yields CUDA_ERROR_CONTEXT_IS_DESTROYED instead of a crash.
#pragma once

#include "cuda_internal.h"

#include <cstdint>
#include <unordered_set>
#include <vector>

struct CUctx_st {
    int device = 0;
    bool primary = false;
    bool active = false;    // a primary context is inactive until retained, and after a reset
                            // or its last release until retained again
    bool destroyed = false; // cuCtxDestroy'ed (never true for a primary context)
    unsigned flags = 0;
    unsigned retains = 0; // primary contexts only
    uint64_t id = 0;
};

namespace cudasim {

class Contexts {
  public:
    void init(int devices);

    CUcontext primary(int device) const { return primaries_[device]; }
    CUcontext create(int device, unsigned flags);
    bool is_known(CUcontext ctx) const { return all_.contains(ctx); }

    // The calling thread's context stack; the top is the current context.
    static std::vector<CUcontext>& stack();
    // The current context, ready for work. A primary context that was reset (or released for
    // the last time) stays current but is destroyed until cuDevicePrimaryCtxRetain brings it
    // back under the same handle, as on a real GPU.
    CUresult current(CUcontext* out) const;
    // Removes every occurrence of `ctx` from the calling thread's stack.
    static void forget_in_this_thread(CUcontext ctx);

  private:
    std::vector<CUctx_st*> primaries_;
    std::unordered_set<CUctx_st*> all_;
    uint64_t next_id_ = 1;
};

} // namespace cudasim
