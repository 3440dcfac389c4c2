// The program the CLI tests record. Built against the real CUDA headers and libcudart,
// run on the simulated CUDA (LD_LIBRARY_PATH=build/lib/cudasim). Each mode is one
// behaviour a test needs; function names are what the tests expect to see in stacks.
//
//   cli_probe leak N BYTES   leaks N buffers from leak_buffers()
//   cli_probe clean          allocates and frees everything
//   cli_probe template       leaks from a template (a name with '<' and '>')
//   cli_probe double-free    frees one pointer twice
//   cli_probe fork           leaks in the parent and in a forked child
//   cli_probe none           never touches CUDA
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

namespace {

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "cli_probe: %s failed: %d\n", what, static_cast<int>(e));
        std::exit(10);
    }
}

} // namespace

__attribute__((noinline)) void leak_buffers(int count, size_t bytes) {
    for (int i = 0; i < count; ++i) {
        void* p = nullptr;
        check(cudaMalloc(&p, bytes), "cudaMalloc");
    }
}

__attribute__((noinline)) void use_and_free(size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    check(cudaFree(p), "cudaFree");
}

template <typename T> __attribute__((noinline)) void leak_typed(size_t count) {
    T* p = nullptr;
    check(cudaMalloc(reinterpret_cast<void**>(&p), count * sizeof(T)), "cudaMalloc");
}

__attribute__((noinline)) void free_twice(size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    check(cudaFree(p), "cudaFree");
    cudaFree(p); // the error under test; its return code does not matter here
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "leak";
    if (std::strcmp(mode, "none") == 0) {
        return 0;
    }
    use_and_free(1 << 20);
    if (std::strcmp(mode, "leak") == 0) {
        int count = argc > 2 ? std::atoi(argv[2]) : 3;
        size_t bytes = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : (1u << 20);
        leak_buffers(count, bytes);
    } else if (std::strcmp(mode, "template") == 0) {
        leak_typed<float>(1024);
    } else if (std::strcmp(mode, "double-free") == 0) {
        free_twice(4096);
    } else if (std::strcmp(mode, "fork") == 0) {
        leak_buffers(1, 4096);
        pid_t pid = fork();
        if (pid == 0) {
            leak_buffers(2, 8192);
            std::exit(0); // a normal exit, so the child's trace is complete
        }
        int status = 0;
        waitpid(pid, &status, 0);
    } else if (std::strcmp(mode, "clean") != 0) {
        std::fprintf(stderr, "cli_probe: unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
