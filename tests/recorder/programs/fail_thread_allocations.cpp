// Preloaded after libgpumemtrace.so by tests/recorder/writer_oom_tests.cpp and
// names_oom_tests.cpp: one thread runs out of host memory. GMT_TEST_FAIL_THREAD chooses
// which: "writer" (the default), the recorder's writer thread (named "gpumemtrace",
// preload/writer_thread.cpp); "asking", a thread of the program between its calls of
// gmt_test_fail_allocations(1) and (0), a stretch where the program itself allocates nothing,
// so that every allocation there is the recorder's. Every allocation that thread makes
// through malloc and its kin is numbered from 0; from number GMT_TEST_FAIL_FROM on, each
// fails as glibc's does when memory is exhausted (null, errno ENOMEM), which libstdc++'s
// operator new turns into std::bad_alloc. Other threads are never failed: what the traced
// program sees must stay what it sees untraced.
// At exit, the number of allocations failed is written to GMT_TEST_FAIL_REPORT, so that a
// test knows whether it tested anything.
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/prctl.h>

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
}

namespace {

std::atomic<long> g_from{-2}; // -2: not read yet; -1: never fail
std::atomic<long> g_counted{0};
std::atomic<long> g_failed{0};

// 1: the writer thread, 0: another thread, -1: not known yet (the name is set just after
// the thread starts, so an unnamed thread is asked again).
__attribute__((tls_model("initial-exec"))) thread_local int t_writer = -1;
// Between the program's gmt_test_fail_allocations(1) and (0).
__attribute__((tls_model("initial-exec"))) thread_local bool t_asking = false;
// -1: not read yet; 0: the writer thread fails; 1: the asking thread does.
std::atomic<int> g_asking{-1};

long failFrom() {
    long from = g_from.load(std::memory_order_relaxed);
    if (from == -2) {
        const char* v = getenv("GMT_TEST_FAIL_FROM");
        from = v ? strtol(v, nullptr, 10) : -1;
        g_from.store(from, std::memory_order_relaxed);
    }
    return from;
}

bool onWriter() {
    if (t_writer < 0) {
        char name[17] = {};
        prctl(PR_GET_NAME, name);
        if (strcmp(name, "gpumemtrace") == 0) {
            t_writer = 1;
        }
    }
    return t_writer == 1;
}

bool onFailingThread() {
    int asking = g_asking.load(std::memory_order_relaxed);
    if (asking < 0) {
        const char* v = getenv("GMT_TEST_FAIL_THREAD");
        asking = v && strcmp(v, "asking") == 0 ? 1 : 0;
        g_asking.store(asking, std::memory_order_relaxed);
    }
    return asking ? t_asking : onWriter();
}

// Whether this allocation fails.
bool fails() {
    const long from = failFrom();
    if (from < 0 || !onFailingThread()) {
        return false;
    }
    if (g_counted.fetch_add(1, std::memory_order_relaxed) < from) {
        return false;
    }
    g_failed.fetch_add(1, std::memory_order_relaxed);
    errno = ENOMEM;
    return true;
}

struct Report {
    ~Report() {
        if (const char* path = getenv("GMT_TEST_FAIL_REPORT")) {
            if (FILE* f = fopen(path, "w")) {
                fprintf(f, "%ld\n", g_failed.load());
                fclose(f);
            }
        }
    }
} g_report;

} // namespace

extern "C" {

// Called by the program (found with dlsym: absent when the shim is not preloaded).
__attribute__((visibility("default"))) void gmt_test_fail_allocations(int on) {
    t_asking = on != 0;
}

void* malloc(size_t n) {
    return fails() ? nullptr : __libc_malloc(n);
}

void* calloc(size_t n, size_t size) {
    return fails() ? nullptr : __libc_calloc(n, size);
}

void* realloc(void* p, size_t n) {
    return fails() ? nullptr : __libc_realloc(p, n);
}

void* aligned_alloc(size_t alignment, size_t n) {
    return fails() ? nullptr : __libc_memalign(alignment, n);
}

void* memalign(size_t alignment, size_t n) {
    return fails() ? nullptr : __libc_memalign(alignment, n);
}

int posix_memalign(void** out, size_t alignment, size_t n) {
    if (fails()) {
        return ENOMEM;
    }
    void* p = __libc_memalign(alignment, n);
    if (!p) {
        return ENOMEM;
    }
    *out = p;
    return 0;
}

} // extern "C"
