// A run for the aggregated recording mode's tests (tests/recorder/aggregate_tests.cpp),
// on the simulated CUDA: what a long-running server does, in small.
//
//   aggregate_story story      churn, a planted leak, a peak that is freed again, ten
//                              "step" phases that each keep 1 MiB (growth), failed
//                              allocations and an invalid free, more churn
//   aggregate_story loop N     N events: N/2 allocate-and-free pairs
//   aggregate_story killed N   a leak, N/2 pairs, another leak, then SIGKILL
//   aggregate_story leaks N    N allocations never freed
//   aggregate_story server N   N requests, each a "request" phase: churn, an output held
//                              to the next request (live at every mark), from the middle
//                              on a cache entry a request (growth, all freed at the end),
//                              a large transient in the middle request (the peak), an
//                              answer leaked every 1000th request (a slow leak)
#define GPUMEMTRACE_WEAK_API
#include <gpumemtrace.h>

#include <cuda_runtime.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "aggregate_story: %s failed: %d\n", what, static_cast<int>(e));
        std::exit(10);
    }
}

// Untraced (tests/recorder/writer_oom_tests.cpp compares), the weak symbol is null.
void markPhase(const char* name) {
    if (gpumemtrace_mark_phase) {
        gpumemtrace_mark_phase(name);
    }
}

} // namespace

__attribute__((noinline)) void* churn_buffer(size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    return p;
}

__attribute__((noinline)) void churn(long pairs) {
    for (long i = 0; i < pairs; ++i) {
        check(cudaFree(churn_buffer(256 + (i % 7) * 512)), "cudaFree");
    }
}

__attribute__((noinline)) void* leak_buffer(size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    return p;
}

__attribute__((noinline)) void* peak_buffer(size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    return p;
}

__attribute__((noinline)) void* kept_activation(size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    return p;
}

__attribute__((noinline)) void* request_output(size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    return p;
}

__attribute__((noinline)) void* cache_entry(size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    return p;
}

void server(long requests) {
    std::vector<void*> cache;
    void* previous = nullptr;
    for (long r = 0; r < requests; ++r) {
        markPhase("request");
        void* out = request_output((1u << 20) + static_cast<size_t>(r % 5) * 4096);
        churn(3);
        if (r == requests / 2) {
            void* big = peak_buffer(256u << 20);
            churn(2);
            check(cudaFree(big), "cudaFree");
        } else if (r > requests / 2) {
            cache.push_back(cache_entry(4096));
        }
        if (r % 1000 == 999) {
            leak_buffer(8192);
        }
        if (previous) {
            check(cudaFree(previous), "cudaFree");
        }
        previous = out;
        churn(2);
    }
    markPhase("shutdown");
    check(cudaFree(previous), "cudaFree");
    for (void* p : cache) {
        check(cudaFree(p), "cudaFree");
    }
}

__attribute__((noinline)) void too_large() {
    void* p = nullptr;
    if (cudaMalloc(&p, size_t{1} << 50) == cudaSuccess) {
        std::exit(11);
    }
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "story";
    const long n = argc > 2 ? std::atol(argv[2]) : 0;
    if (std::strcmp(what, "loop") == 0) {
        churn(n / 2);
        return 0;
    }
    if (std::strcmp(what, "server") == 0) {
        server(n);
        return 0;
    }
    if (std::strcmp(what, "leaks") == 0) {
        for (long i = 0; i < n; ++i) {
            leak_buffer(4096);
        }
        return 0;
    }
    if (std::strcmp(what, "killed") == 0) {
        leak_buffer(3u << 20);
        churn(n / 2);
        leak_buffer(5u << 20);
        std::fflush(stdout);
        std::raise(SIGKILL);
        return 1;
    }
    churn(5000);
    leak_buffer(4u << 20);
    leak_buffer(4u << 20);
    leak_buffer(1u << 20);
    churn(2000);
    std::vector<void*> peak;
    for (int i = 0; i < 4; ++i) {
        peak.push_back(peak_buffer(64u << 20));
        churn(100); // the peak's holders are freed among folded churn
    }
    for (void* p : peak) {
        check(cudaFree(p), "cudaFree");
    }
    churn(2000);
    std::vector<void*> kept;
    for (int step = 0; step < 10; ++step) {
        markPhase("step");
        void* scratch = churn_buffer(8u << 20);
        kept.push_back(kept_activation(1u << 20));
        churn(300);
        check(cudaFree(scratch), "cudaFree");
    }
    markPhase("done");
    for (int i = 0; i < 3; ++i) {
        too_large();
        churn(100);
    }
    int not_allocated = 0;
    if (cudaFree(&not_allocated) == cudaSuccess) {
        return 12;
    }
    churn(5000);
    std::puts("done");
    return 0;
}
