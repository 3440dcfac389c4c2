// One thread calls exit() while others are inside CUDA calls: argv[1] worker threads make
// cudaMalloc/cudaFree pairs without end; once every worker has made argv[2] pairs (a
// count, not a time), the main thread calls exit(0) with all of them still calling.
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <sched.h>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 4;
    const long warmup = argc > 2 ? std::atol(argv[2]) : 1000;
    cudaSetDevice(0);
    std::vector<std::atomic<long>> done(threads);
    for (int t = 0; t < threads; ++t) {
        std::thread([&done, t] {
            for (;;) {
                void* p = nullptr;
                if (cudaMalloc(&p, 4096 + t) == cudaSuccess) {
                    cudaFree(p);
                }
                done[t].fetch_add(1, std::memory_order_relaxed);
            }
        }).detach();
    }
    for (int t = 0; t < threads; ++t) {
        while (done[t].load(std::memory_order_relaxed) < warmup) {
            sched_yield();
        }
    }
    std::puts("exiting");
    std::fflush(stdout);
    std::exit(0);
}
