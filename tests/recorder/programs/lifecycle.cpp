// How a traced process can end, one mode per run (argv[1]):
//   fork       parent 31001, child 32001 (its own trace), parent 33001 after the wait
//   fork-exec  child execs argv[2] (traced afresh by the inherited LD_PRELOAD)
//   sigkill    allocates 34001 x argv[2], prints "ready", waits to be killed
//   segv       allocates 35001, then dereferences NULL
//   abort      allocates 36001, then abort()
//   exit       allocates 37001, then _exit(3)
//   exec       allocates and frees 38001, then execs argv[2] with the arguments after it
//   execle     the same through execle (at most two arguments), with this environment
//   exec-fail  allocates and frees 38001, fails to exec, allocates and frees 38002, exits 0
//   pairs      argv[2] cudaMalloc/cudaFree pairs, prints "done N", exits 0
//   nocuda     never touches CUDA
#include <cuda_runtime_api.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

static void* alloc(size_t size) {
    void* p = nullptr;
    if (cudaMalloc(&p, size) != cudaSuccess) {
        std::fprintf(stderr, "cudaMalloc(%zu) failed\n", size);
        std::exit(1);
    }
    return p;
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "";
    if (std::strcmp(mode, "nocuda") == 0) {
        std::puts("no CUDA here");
        return 0;
    }
    if (std::strcmp(mode, "fork") == 0 || std::strcmp(mode, "fork-exec") == 0) {
        alloc(31001);
        pid_t child = fork();
        if (child == 0) {
            if (std::strcmp(mode, "fork-exec") == 0) {
                execv(argv[2], argv + 2);
                _exit(127);
            }
            alloc(32001);
            std::exit(0);
        }
        int status = 0;
        waitpid(child, &status, 0);
        alloc(33001);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    if (std::strcmp(mode, "sigkill") == 0) {
        long n = argc > 2 ? std::atol(argv[2]) : 1000;
        for (long i = 0; i < n; ++i) {
            alloc(34001);
        }
        std::puts("ready");
        std::fflush(stdout);
        for (;;) {
            pause();
        }
    }
    if (std::strcmp(mode, "segv") == 0) {
        alloc(35001);
        volatile int* nowhere = nullptr;
        return *nowhere;
    }
    if (std::strcmp(mode, "abort") == 0) {
        alloc(36001);
        std::abort();
    }
    if (std::strcmp(mode, "exit") == 0) {
        alloc(37001);
        _exit(3);
    }
    if (std::strcmp(mode, "exec") == 0 && argc > 2) {
        cudaFree(alloc(38001));
        execv(argv[2], argv + 2);
        std::perror("execv");
        return 127;
    }
    if (std::strcmp(mode, "execle") == 0 && argc > 3) {
        cudaFree(alloc(38001));
        if (argc > 4) {
            execle(argv[2], argv[2], argv[3], argv[4], nullptr, environ);
        } else {
            execle(argv[2], argv[2], argv[3], nullptr, environ);
        }
        std::perror("execle");
        return 127;
    }
    if (std::strcmp(mode, "exec-fail") == 0) {
        cudaFree(alloc(38001));
        char* args[] = {const_cast<char*>("/nonexistent/program"), nullptr};
        execv(args[0], args);
        cudaFree(alloc(38002));
        std::puts("exec failed, went on");
        return 0;
    }
    if (std::strcmp(mode, "pairs") == 0) {
        long n = argc > 2 ? std::atol(argv[2]) : 1000;
        for (long i = 0; i < n; ++i) {
            cudaFree(alloc(39001));
        }
        std::printf("done %ld\n", n);
        return 0;
    }
    std::fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
}
