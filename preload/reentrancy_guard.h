// Marks the current thread as inside a wrapped CUDA call. cudart implements cudaMalloc by
// calling cuMemAlloc_v2 through a pointer the tracer handed out, so the inner call must
// see it is nested and stay silent: one user call, one event, named for the outer API.
// initial-exec TLS: no allocation or lock on first access, safe in a preloaded library.
#pragma once

namespace gmt::preload {

inline thread_local int t_call_depth __attribute__((tls_model("initial-exec"))) = 0;

class CallScope {
  public:
    CallScope() : outermost_(t_call_depth++ == 0) {}
    ~CallScope() { --t_call_depth; }
    CallScope(const CallScope&) = delete;
    CallScope& operator=(const CallScope&) = delete;

    bool outermost() const { return outermost_; }
    // Whether the calling thread is inside a wrapped call already.
    static bool nested() { return t_call_depth != 0; }

  private:
    bool outermost_;
};

} // namespace gmt::preload
