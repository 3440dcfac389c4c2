// Short-lived threads, each making one allocate/free pair: what the recorder's per-thread
// set-up costs (scripts/bench-threads.sh). THREADS threads, BATCH alive at a time.
//
//   thread_churn THREADS [BATCH=16]
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

__attribute__((noinline)) bool pair() {
    void* p = nullptr;
    return cudaMalloc(&p, 4096) == cudaSuccess && cudaFree(p) == cudaSuccess;
}

} // namespace

int main(int argc, char** argv) {
    const long threads = argc > 1 ? std::atol(argv[1]) : 10000;
    const long batch = argc > 2 ? std::atol(argv[2]) : 16;
    if (!pair()) { // the process's own start-up (context, trace) outside the threads
        return 1;
    }
    long failed = 0;
    for (long done = 0; done < threads; done += batch) {
        std::vector<std::thread> group;
        std::vector<char> ok(static_cast<size_t>(batch), 1);
        for (long i = 0; i < batch && done + i < threads; ++i) {
            group.emplace_back([&ok, i] { ok[static_cast<size_t>(i)] = pair(); });
        }
        for (std::thread& t : group) {
            t.join();
        }
        for (char o : ok) {
            failed += !o;
        }
    }
    if (failed) {
        std::fprintf(stderr, "%ld pairs failed\n", failed);
        return 1;
    }
    return 0;
}
