/* gpumemtrace public API.
 *
 * Optional calls a traced program can make into libgpumemtrace.so. They are exported by
 * the preload library only, so a program that must also run untraced should declare them
 * weak (as below, with GPUMEMTRACE_WEAK_API defined) and test for NULL before calling.
 */
#ifndef GPUMEMTRACE_H
#define GPUMEMTRACE_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(GPUMEMTRACE_WEAK_API)
#define GPUMEMTRACE_API __attribute__((weak))
#else
#define GPUMEMTRACE_API
#endif

/* Marks the start of a named phase ("warmup", "epoch 3") in the trace; the report can
 * relate allocations and the peak to phases. Names longer than 4096 bytes are cut. */
GPUMEMTRACE_API void gpumemtrace_mark_phase(const char* name);

/* Nested phases: gpumemtrace_push_phase() begins a phase inside the current one of this
 * thread ("test_train" > "step"), gpumemtrace_pop_phase() ends the innermost one pushed
 * by this thread; what was current before the push is current again. NVTX range pushes
 * and pops do the same when the recorder is the NVTX tool (docs/configuration.md). A
 * mark inside a pushed phase is nested in it, and ends with it. */
GPUMEMTRACE_API void gpumemtrace_push_phase(const char* name);
GPUMEMTRACE_API void gpumemtrace_pop_phase(void);

/* What the trace holds between this thread's last gpumemtrace_push_phase() and the
 * gpumemtrace_pop_phase() that followed it. A phase with no record between its push and
 * its pop, and no event dropped meanwhile, had no memory event in it at all, from any
 * thread: a test harness can say so without reading the trace (the pytest plugin,
 * docs/ci.md). */
struct gpumemtrace_popped_phase {
    /* Ring slots taken between the push and the pop by the records of any thread (events,
     * phases, and what the events refer to: stacks, modules, Python code, a caching
     * allocator's settings). A record takes one slot or more: 0 exactly when there was no
     * record. */
    unsigned long long slots;
    /* Events lost meanwhile (GPUMEMTRACE_ON_FULL=drop, or calls after the trace ended). */
    unsigned long long dropped;
};

/* Fills the first `size` bytes of *phase (size: sizeof(struct gpumemtrace_popped_phase);
 * fields added later come at the end). Returns 0, or -1 when this thread's last push or pop
 * was not a pop right after a push, either of them could not be recorded, or the process is
 * not traced. */
GPUMEMTRACE_API int gpumemtrace_last_popped_phase(struct gpumemtrace_popped_phase* phase,
                                                  unsigned long size);

/* Per-phase accounting: the recorder counts what a phase left behind, so that a test
 * harness gets a test's figures without reading the trace (the pytest plugin, docs/ci.md).
 * After gpumemtrace_account_phases(), each phase this thread pushes while no accounted
 * phase is open is followed, with the phases nested in it, to the pop that closes it:
 * every device allocation made meanwhile by any thread, and its free, and a caching
 * allocator's blocks (PyTorch's tensors) inside its segments. Returns 0, or -1 when
 * the process is not traced. One thread per process: the last to call it. */
GPUMEMTRACE_API int gpumemtrace_account_phases(void);

/* Why the figures of struct gpumemtrace_phase_account may not be what `gpumemtrace check
 * --phase` says of the phase (bits of `unsettled`): then ask it. */
/* Events the accounting does not follow: arrays, pools, host memory, VMM, device resets,
 * or an address allocated again while live (a free the trace misses). */
#define GPUMEMTRACE_ACCOUNT_OTHER_EVENTS 0x1ull
/* Memory allocated before the phase was freed in it: the process's device memory fell by
 * bytes not counted here, so peak_increase_bytes may be more than the analyzer's figure
 * (never less). Leaks, counts and growth are unaffected. */
#define GPUMEMTRACE_ACCOUNT_FREED_BEFORE 0x2ull
/* An allocation stack's live bytes from the phase took three or more different levels:
 * the growth analysis may find growth across iterations in it. */
#define GPUMEMTRACE_ACCOUNT_MAY_GROW 0x4ull
/* Another thread marked, pushed or popped a phase meanwhile (the analyzer's current phase
 * was then that thread's). */
#define GPUMEMTRACE_ACCOUNT_OTHER_PHASES 0x8ull
/* Events were dropped meanwhile. */
#define GPUMEMTRACE_ACCOUNT_DROPPED 0x10ull
/* Recording was paused or resumed meanwhile (`gpumemtrace control`). */
#define GPUMEMTRACE_ACCOUNT_PAUSED 0x20ull
/* More live allocations of the phase than the recorder keeps (65536), or no host memory
 * to keep them. */
#define GPUMEMTRACE_ACCOUNT_OVERFLOW 0x40ull
/* A caching allocator's block events (PyTorch's tensors) were in the phase: its figures at
 * the tensor level are the fields from block_allocations on, which a caller that does not
 * read them must leave to `check` (a caller that does clears this bit). */
#define GPUMEMTRACE_ACCOUNT_BLOCKS 0x80ull
/* Block events the accounting cannot place exactly as the analysis does: a block whose size
 * is an estimate, expandable segments, an out-of-memory, a free or alloc the trace cannot
 * match, a free made while the interpreter finalized, a block of a segment taken before the
 * accounting began (gpumemtrace_account_phases). */
#define GPUMEMTRACE_ACCOUNT_BLOCKS_INEXACT 0x100ull

struct gpumemtrace_phase_account {
    unsigned long long unsettled; /* GPUMEMTRACE_ACCOUNT_* bits; 0: every figure is exact */
    /* Device allocations (cudaMalloc, cuMemAlloc, managed memory) made in the phase, and
     * frees of them in it. */
    unsigned long long allocations;
    unsigned long long frees;
    /* Of them, still allocated at the pop: the phase's leaks before `check --phase` applies
     * its suppressions and its caching allocators' rules (0: nothing for them to change). */
    unsigned long long live_allocations;
    unsigned long long live_bytes;
    /* The most the process's device memory rose above its level at the push: `check
     * --phase --max-peak-increase`'s figure (the segment level, for PyTorch). */
    unsigned long long peak_increase_bytes;
    /* The tensor level (GPUMEMTRACE_ACCOUNT_BLOCKS): blocks a caching allocator handed out
     * in the phase, and those of them the program freed in it. */
    unsigned long long block_allocations;
    unsigned long long block_frees;
    /* Of those, still allocated at the pop, and their bytes as the caching allocator counts
     * them (rebuilt with its rules, docs/frameworks.md): the phase's leaked tensors. */
    unsigned long long live_blocks;
    unsigned long long live_block_bytes;
    /* Of live_allocations, the segments the caching allocator took in the phase and holds at
     * the pop: its cache, which `check` does not count as leaked. */
    unsigned long long cached_allocations;
    unsigned long long cached_bytes;
};

/* Fills the first `size` bytes of *account (fields added later come at the end) with the
 * figures of the accounted phase that this thread's last pop closed, once the recorder has
 * put every record before that pop in order (it drains the ring as gpumemtrace_flush does).
 * Returns 0, or -1 when this thread's last phase record was not such a pop, one of the
 * phase's own pushes and pops could not be recorded, a record before the pop was still
 * being written after a bounded wait (another thread inside a traced call), the trace is
 * aggregated (GPUMEMTRACE_MODE=aggregate), or the process is not traced. */
GPUMEMTRACE_API int gpumemtrace_last_phase_account(struct gpumemtrace_phase_account* account,
                                                   unsigned long size);

/* Moves everything recorded so far from the in-file ring into the log. Recorded events
 * are durable without it; this only makes the log current. Returns 0, or -1 when this
 * process has no trace (nothing recorded yet, or tracing is off). */
GPUMEMTRACE_API int gpumemtrace_flush(void);

/* The path of this process's trace file (starting the trace if it was not yet), or NULL
 * when this process is not traced. Valid until the process exits. Test harnesses use it to
 * analyse the trace while the process runs (after gpumemtrace_flush). */
GPUMEMTRACE_API const char* gpumemtrace_trace_file(void);

/* 1 when calls of this process are being recorded, 0 otherwise. */
GPUMEMTRACE_API int gpumemtrace_active(void);

#ifdef __cplusplus
}
#endif

#endif /* GPUMEMTRACE_H */
