// The recording pipeline of one process: lazily creates the trace at the first recorded
// call, turns calls into events (time, thread, interned stack), commits them to the ring
// and owns the writer thread. Survives fork (the child starts its own trace) and ends the
// trace on exit, _exit and fatal signals.
#pragma once

#include "config.h"
#include "module_map.h"
#include "python/python_stacks.h"
#include "stack_table.h"

#include <gpumemtrace/trace_format.h>

#include <atomic>
#include <cstdint>
#include <mutex>

namespace gmt::preload {

struct Session;

class Recorder {
  public:
    static Recorder& instance();

    bool active() const { return config_.enabled && !finalized_.load(std::memory_order_relaxed); }

    // Records a call after it returned (allocations: the address is known only then).
    void record(format::Event& e);

    // Calls that end a lifetime take their place in the sequence *before* the real call,
    // so a concurrent allocation that reuses the address is always ordered after it.
    struct Pending {
        Session* session = nullptr;
        uint64_t pos = 0;
    };
    Pending reserve(format::Event& e);
    void commit(const Pending& pending, const format::Event& e);

    void markPhase(const char* name);
    bool flush();
    // Ends the trace: drains and writes the trailer. `signal` is the fatal signal, or 0.
    void finalize(int signal, bool from_signal);
    // The fatal-signal path when the application has a handler of its own: the process may
    // live on, so only drain.
    void drainFromSignal();

    void beforeFork();
    void afterForkParent();
    void afterForkChild();

  private:
    Recorder();
    Session* session();
    Session* createSession();
    void stamp(format::Event& e, Session* s);
    static void emitStack(uint32_t id, const uint64_t* frames, uint32_t depth, void* ctx);
    static void emitModule(const format::ModuleInfo& m, void* ctx);
    static void emitPythonCode(const format::PythonCodeInfo& code, void* ctx);

    Config config_;
    std::atomic<Session*> session_{nullptr};
    std::atomic<bool> finalized_{false};
    std::atomic<bool> creation_failed_{false};
    std::mutex create_mutex_;
    StackTable stacks_;
    ModuleMap modules_; // guarded by stacks_.mutex()
    python::PythonStacks python_;
};

} // namespace gmt::preload
