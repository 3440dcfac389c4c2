// oom: allocate until the device is out of memory, report it, clean up, exit 0.
//
// Each allocation is 2000000000 bytes. The one that fails gets cudaErrorMemoryAllocation, and
// cudaMemGetInfo shows how little was left; a tracer should record that failed allocation with
// the free memory at that moment.
#include "check.h"

#include <vector>

int main() {
    print_device("oom");
    const size_t chunk_bytes = 2000000000;
    std::vector<void*> chunks;
    for (int attempt = 0; attempt < 100000; ++attempt) {
        void* chunk = nullptr;
        cudaError_t error = cudaMalloc(&chunk, chunk_bytes);
        if (error == cudaErrorMemoryAllocation) {
            size_t free = 0;
            size_t total = 0;
            cudaGetLastError(); // the failure is also the last error; clear it
            CHECK(cudaMemGetInfo(&free, &total));
            std::printf("oom: allocation %zu of %zu bytes failed: %s (%s); %zu of %zu bytes free\n",
                        chunks.size() + 1, chunk_bytes, cudaGetErrorName(error),
                        cudaGetErrorString(error), free, total);
            for (void* p : chunks) {
                CHECK(cudaFree(p));
            }
            return 0;
        }
        CHECK(error);
        chunks.push_back(chunk);
    }
    std::fprintf(stderr, "oom: never ran out of memory\n");
    return 1;
}
