// A training-like loop for the growth analysis tests, built against the real CUDA headers
// and libcudart and run on the simulated CUDA.
//
//   training_loop MARKS KEEP [STEPS]
//     MARKS: phases  gpumemtrace_mark_phase("step") at each step (the weak public API)
//            nvtx    NVTX ranges: "step", with "forward" and "backward" inside it
//            nested  gpumemtrace_push_phase("train") around the loop, "step" marked inside
//            none    no marks: the iterations must be found from the allocation pattern
//     KEEP:  keep    each step keeps one 1 MiB buffer in a list (the growth under test)
//            constant  the working set is the same in every step
//     STEPS: default 50
//
// Each step allocates its activations (scratch_buffers) and frees them at the end; with
// `keep`, keep_activation() allocates the buffer the list keeps.
#define GPUMEMTRACE_WEAK_API
#include <gpumemtrace.h>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "training_loop: %s failed: %d\n", what, static_cast<int>(e));
        std::exit(10);
    }
}

} // namespace

__attribute__((noinline)) void* keep_activation(size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    return p;
}

__attribute__((noinline)) void* scratch_buffer(size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    return p;
}

__attribute__((noinline)) void train_step(std::vector<void*>& kept, bool keep, bool nvtx) {
    if (nvtx) {
        nvtxRangePushA("forward");
    }
    void* a = scratch_buffer(8u << 20);
    void* b = scratch_buffer(2u << 20);
    if (keep) {
        kept.push_back(keep_activation(1u << 20));
    }
    if (nvtx) {
        nvtxRangePop();
        nvtxRangePushA("backward");
    }
    check(cudaFree(b), "cudaFree");
    check(cudaFree(a), "cudaFree");
    if (nvtx) {
        nvtxRangePop();
    }
}

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: training_loop phases|nvtx|nested|none keep|constant "
                             "[STEPS]\n");
        return 2;
    }
    const std::string marks = argv[1];
    const bool keep = std::strcmp(argv[2], "keep") == 0;
    const int steps = argc > 3 ? std::atoi(argv[3]) : 50;
    const bool nvtx = marks == "nvtx";
    void* model = nullptr;
    check(cudaMalloc(&model, 32u << 20), "cudaMalloc"); // the weights, held throughout
    if (marks == "nested" && gpumemtrace_push_phase) {
        gpumemtrace_push_phase("train");
    }
    std::vector<void*> kept;
    for (int i = 0; i < steps; ++i) {
        if ((marks == "phases" || marks == "nested") && gpumemtrace_mark_phase) {
            gpumemtrace_mark_phase("step");
        }
        if (nvtx) {
            nvtxRangePushA("step");
        }
        train_step(kept, keep, nvtx);
        if (nvtx) {
            nvtxRangePop();
        }
    }
    if (marks == "nested" && gpumemtrace_pop_phase) {
        gpumemtrace_pop_phase();
    }
    // The list goes away at the end, as a Python list would at exit: the growth is still
    // growth, though nothing is leaked at exit.
    for (void* p : kept) {
        check(cudaFree(p), "cudaFree");
    }
    check(cudaFree(model), "cudaFree");
    return 0;
}
