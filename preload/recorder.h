// The recording pipeline of one process: lazily creates the trace at the first recorded
// call, turns calls into events (time, thread, interned stack), commits them to the ring
// (ring_buffer.h) that the writer thread drains into the log (log_writer.h,
// writer_thread.h). Survives fork (the child starts its own trace) and ends the trace on
// exit, _exit, execve and fatal signals: exactly, even while other threads are inside
// traced calls (the ring is sealed first; see RingBuffer::seal).
#pragma once

#include "config.h"
#include "frameworks/torch_caching_allocator.h"
#include "module_map.h"
#include "phase_accounting.h"
#include "phase_window.h"
#include "python/python_stacks.h"
#include "stack_table.h"

#include <gpumemtrace/format/event.h>
#include <gpumemtrace/format/records.h>

#include <atomic>
#include <cstdint>
#include <mutex>

namespace gmt::preload {

struct Session;

class Recorder {
  public:
    // Every wrapped call asks for it: after the first, one load.
    static Recorder& instance() {
        Recorder* r = instance_.load(std::memory_order_acquire);
        return r ? *r : create();
    }

    bool active() const { return config_.enabled && !finalized_.load(std::memory_order_relaxed); }

    // Records a call after it returned (allocations: the address is known only then).
    // `with_stack` false: the event carries no stack (stack_id 0) and none is walked.
    void record(format::Event& e, bool with_stack = true);

    // From every allocation hook, after its event: attaches to a framework's caching
    // allocator once it is there and ready (frameworks/torch_caching_allocator.h). One
    // predictable branch unless PyTorch is loaded and not yet attached.
    void pollFrameworks() { torch_.poll(); }

    // Calls that end a lifetime take their place in the sequence *before* the real call,
    // so a concurrent allocation that reuses the address is always ordered after it.
    struct Pending {
        Session* session = nullptr;
        uint64_t pos = 0;
    };
    Pending reserve(format::Event& e);
    void commit(const Pending& pending, const format::Event& e);

    // A Phase record (trace_format.h): a mark or push needs a name; a pop has none.
    void markPhase(const char* name, format::PhaseKind kind = format::PhaseKind::Mark);
    // What the trace holds between this thread's last push and the pop right after it
    // (phase_window.h); false when unknown.
    bool lastPoppedPhase(PoppedPhase& out);
    // This thread's pushes are accounted from now on (phase_accounting.h); false when not
    // tracing.
    bool accountPhases();
    // The figures of the accounted phase this thread's last pop closed; false when unknown.
    bool lastPhaseAccount(PhaseAccount& out);
    bool flush();
    // This process's trace file (creating it when tracing and not yet created), or null.
    const char* tracePath();
    // Ends the trace: drains and writes the trailer. `signal` is the fatal signal, or 0.
    void finalize(int signal, bool from_signal);
    // The fatal-signal path when the application has a handler of its own: the process may
    // live on, so only drain.
    void drainFromSignal();

    // execve replaces the image: the trace ends first. When execve fails and returns, the
    // trace goes on in the same file (a later trailer supersedes the first).
    void beforeExec();
    void afterFailedExec();

    void beforeFork();
    void afterForkParent();
    void afterForkChild();

  private:
    Recorder();
    static Recorder& create();
    static inline std::atomic<Recorder*> instance_{nullptr};
    // The trace of this process, created at the first call; null when it cannot be.
    Session* session() {
        Session* s = session_.load(std::memory_order_acquire);
        return s ? s : sessionSlow();
    }
    Session* sessionSlow();
    Session* createSession();
    // Inlined into record() and reserve(): one frame less for every stack walk to verify.
    [[gnu::always_inline]] inline void stamp(format::Event& e, Session* s, bool with_stack);
    // Whether calls are recorded now: the prologue's control word (file_layout.h), which
    // `gpumemtrace control` flips from another process. One relaxed load and one branch
    // per recorded call while recording; the rest, in recordingSlow(), only when it is not
    // kControlRecording.
    [[gnu::always_inline]] inline bool recording(Session* s);
    // Paused (false), or a resume to take (writes the Resume record, true).
    [[gnu::cold, gnu::noinline]] bool recordingSlow(Session* s);
    void recordRecording(Session* s, format::RecordingChange change, format::RecordingCause cause);
    // Seals the ring, stops the writer thread and writes the trailer. `provisional`: an
    // end that afterFailedExec() may take back (claims meanwhile count as dropped).
    void endTrace(Session* s, int signal, bool from_signal, bool provisional);
    static void emitStack(uint32_t id, const uint64_t* frames, uint32_t depth, void* ctx);
    static void emitModule(const format::ModuleInfo& m, void* ctx);
    static void emitPythonCode(const format::PythonCodeInfo& code, void* ctx);
    // The caching allocator's block events and what became of the attempt to get them. A
    // block's free_requested and free_completed are recorded without a stack: nothing the
    // analysis says needs the free's own, and the block's allocation stack stands for it
    // where a free is shown with frames (docs/frameworks.md).
    static void recordBlock(format::Event& e);
    static void reportCachingAllocator(const format::CachingAllocatorInfo& info);

    Config config_;
    std::atomic<Session*> session_{nullptr};
    std::atomic<bool> finalized_{false};
    std::atomic<bool> creation_failed_{false};
    std::mutex create_mutex_;
    // finalize (outside signal handlers), beforeExec and afterFailedExec, one at a time.
    std::mutex end_mutex_;
    bool exec_pending_ = false;
    // A Pause record is in the trace and no Resume after it yet.
    std::atomic<bool> pause_recorded_{false};
    StackTable stacks_;
    ModuleMap modules_; // guarded by stacks_.mutex()
    python::PythonStacks python_;
    frameworks::TorchCachingAllocator torch_;
};

} // namespace gmt::preload
