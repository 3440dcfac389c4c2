/* A CUDA program as a project's own test would be: built against the CUDA headers only,
 * linked with the installed simulated runtime, gated by the installed gpumemtrace
 * (docs/ci.md, GPU-less jobs). With "leak" it keeps one 1 MiB buffer. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
    void* p = NULL;
    if (cudaMalloc(&p, 1 << 20) != cudaSuccess) {
        fprintf(stderr, "gate_probe: cudaMalloc failed\n");
        return 10;
    }
    if (argc < 2 || strcmp(argv[1], "leak") != 0) {
        cudaFree(p);
    }
    return 0;
}
