// A long-running program for the live tests (tests/cli/live_e2e.py): it serves "batches"
// on command, through files, so that every test step is bounded by work done and never
// by time.
//
//   live_server DIR
//
// Writes DIR/pid, then for batch n = 1, 2, ... waits for DIR/go-n and does what it says:
//   steps    5 steps: each allocates and frees scratch memory and keeps 1 MiB in
//            leak_slowly() (the planted leak), marking the phase "step"
//   release  frees the buffers the previous batch kept
//   stop     exits (the kept buffers leaked)
// then creates DIR/done-n. Each wait polls every millisecond; no CUDA call is made while
// it waits.
#define GPUMEMTRACE_WEAK_API
#include <gpumemtrace.h>

#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "live_server: %s failed: %d\n", what, static_cast<int>(e));
        std::exit(10);
    }
}

std::string command(const std::string& path) {
    for (;;) {
        std::ifstream in(path);
        std::string word;
        if (in >> word) {
            return word;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

void touch(const std::string& path) {
    std::ofstream(path + ".tmp") << "done\n";
    std::rename((path + ".tmp").c_str(), path.c_str());
}

} // namespace

__attribute__((noinline)) void* leak_slowly() {
    void* p = nullptr;
    check(cudaMalloc(&p, 1u << 20), "cudaMalloc"); // LINE:leak
    return p;
}

__attribute__((noinline)) void handle_request() {
    void* scratch = nullptr;
    check(cudaMalloc(&scratch, 4u << 20), "cudaMalloc");
    check(cudaFree(scratch), "cudaFree");
}

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: live_server DIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    {
        std::ofstream(dir + "/pid.tmp") << getpid() << '\n';
        std::rename((dir + "/pid.tmp").c_str(), (dir + "/pid").c_str());
    }
    void* model = nullptr;
    check(cudaMalloc(&model, 8u << 20), "cudaMalloc");
    std::vector<void*> previous, kept;
    for (int n = 1;; ++n) {
        const std::string word = command(dir + "/go-" + std::to_string(n));
        if (word == "stop") {
            touch(dir + "/done-" + std::to_string(n));
            return 0;
        }
        if (word == "release") {
            for (void* p : previous) {
                check(cudaFree(p), "cudaFree");
            }
            previous.clear();
        } else {
            for (int step = 0; step < 5; ++step) {
                gpumemtrace_mark_phase("step");
                handle_request();
                kept.push_back(leak_slowly());
            }
            previous = kept;
            kept.clear();
        }
        touch(dir + "/done-" + std::to_string(n));
    }
}
