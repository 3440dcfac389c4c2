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
