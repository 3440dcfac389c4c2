// argv[1] threads, each doing argv[2] cudaMalloc/cudaFree pairs: the "nothing lost" check.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
    int threads = argc > 1 ? std::atoi(argv[1]) : 8;
    long pairs = argc > 2 ? std::atol(argv[2]) : 100000;
    cudaSetDevice(0);
    std::vector<std::thread> workers;
    std::vector<int> failures(threads, 0);
    for (int t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            cudaSetDevice(0);
            for (long i = 0; i < pairs; ++i) {
                void* p = nullptr;
                if (cudaMalloc(&p, 256 + t) != cudaSuccess || cudaFree(p) != cudaSuccess) {
                    ++failures[t];
                }
            }
        });
    }
    for (auto& w : workers) {
        w.join();
    }
    for (int f : failures) {
        if (f) {
            std::fprintf(stderr, "%d calls failed\n", f);
            return 1;
        }
    }
    return 0;
}
