// Cost of one traced call. BM_cudaMallocFree is the recorder's hot path:
// run it plain and under LD_PRELOAD=libgpumemtrace.so at several GPUMEMTRACE_STACK_DEPTH
// values; BM_mallocFree is the same loop shape on malloc/free for heaptrack. Both run at
// the bottom of a recursion so every captured stack is deep (>= 64 frames) while the call
// site stays the same, which is what a real framework's allocator looks like: deep and
// repetitive. scripts/bench-recorder.sh drives the comparison.
//
// Extra flags (taken out before Google Benchmark sees argv):
//   --recursion_depth=N  frames of recursion above the loop (default 64)
//   --iterations=N       fixed iteration count instead of Google Benchmark's auto-sizing,
//                        so whole-process runs do a known amount of work
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int g_recursion_depth = 64;
int64_t g_iterations = 0;

// 1 MiB: a typical tensor-sized device allocation; the simulator places it on a granule.
constexpr size_t kDeviceBytes = size_t{1} << 20;
// Small enough to stay on glibc's fast path, so the malloc baseline is the allocator's best
// case and heaptrack's share of the total is not hidden behind mmap/munmap.
constexpr size_t kHostBytes = 64;

// The empty asm after the recursive call keeps it from being a tail call (which would
// collapse the recursion into a loop and flatten the stack we want to be deep).
template <typename Body> __attribute__((noinline)) void recurse(int depth, Body& body) {
    if (depth > 0) {
        recurse(depth - 1, body);
        asm volatile("" ::: "memory");
        return;
    }
    body();
}

void cudaMallocFreeLoop(benchmark::State& state) {
    void* p = nullptr;
    for (auto _ : state) {
        if (cudaMalloc(&p, kDeviceBytes) != cudaSuccess) {
            state.SkipWithError("cudaMalloc failed");
            break;
        }
        benchmark::DoNotOptimize(p);
        cudaFree(p);
    }
}

void mallocFreeLoop(benchmark::State& state) {
    for (auto _ : state) {
        void* p = std::malloc(kHostBytes);
        // Without this the compiler may delete the malloc/free pair altogether.
        benchmark::DoNotOptimize(p);
        std::free(p);
    }
}

template <void (*Loop)(benchmark::State&)> void runDeep(benchmark::State& state) {
    auto body = [&] { Loop(state); };
    recurse(g_recursion_depth, body);
    // Each iteration is one allocation and one free: two traced events.
    state.SetItemsProcessed(state.iterations() * 2);
    state.counters["events"] = static_cast<double>(state.iterations() * 2);
}

// Warms the runtime up (context creation, module loading) outside the measured loop.
bool initCuda() {
    void* p = nullptr;
    if (cudaMalloc(&p, kDeviceBytes) != cudaSuccess) {
        return false;
    }
    return cudaFree(p) == cudaSuccess;
}

// Removes our flags from argv; returns false on a malformed value.
bool takeFlags(int& argc, char** argv) {
    int out = 1;
    for (int i = 1; i < argc; ++i) {
        const char* a = argv[i];
        char* end = nullptr;
        if (std::strncmp(a, "--recursion_depth=", 18) == 0) {
            g_recursion_depth = static_cast<int>(std::strtol(a + 18, &end, 10));
            if (*end || g_recursion_depth < 0) {
                return false;
            }
        } else if (std::strncmp(a, "--iterations=", 13) == 0) {
            g_iterations = std::strtoll(a + 13, &end, 10);
            if (*end || g_iterations < 0) {
                return false;
            }
        } else {
            argv[out++] = argv[i];
        }
    }
    argc = out;
    argv[argc] = nullptr;
    return true;
}

} // namespace

int main(int argc, char** argv) {
    if (!takeFlags(argc, argv)) {
        std::fprintf(stderr,
                     "usage: %s [--recursion_depth=N] [--iterations=N] "
                     "[benchmark flags]\n",
                     argv[0]);
        return 2;
    }
    std::string filter;
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], "--benchmark_filter=", 19) == 0) {
            filter = argv[i] + 19;
        }
    }
    // The heaptrack run must not touch CUDA at all (the simulator's own allocations would
    // be part of its trace), so CUDA is only initialised when the CUDA loop may run.
    bool cuda_wanted = filter.empty() || filter.find("cuda") != std::string::npos;
    if (cuda_wanted && !initCuda()) {
        std::fprintf(stderr, "CUDA is not usable (run with LD_LIBRARY_PATH=<build>/lib/cudasim)\n");
        return 1;
    }

    std::vector<benchmark::internal::Benchmark*> registered;
    if (cuda_wanted) {
        registered.push_back(
            benchmark::RegisterBenchmark("BM_cudaMallocFree", runDeep<cudaMallocFreeLoop>));
    }
    registered.push_back(benchmark::RegisterBenchmark("BM_mallocFree", runDeep<mallocFreeLoop>));
    for (auto* b : registered) {
        b->Unit(benchmark::kNanosecond)->UseRealTime();
        if (g_iterations > 0) {
            b->Iterations(g_iterations);
        }
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
        return 2;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
