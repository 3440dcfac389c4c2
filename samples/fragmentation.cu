// fragmentation: free memory that cannot be used.
//
// 200 blocks of 100000 bytes fill about ten 2 MiB granules. Freeing every other block frees
// 10,000,000 bytes, but only as 100000-byte holes between live blocks, so the device gets none
// of it back, and a 3000000-byte allocation afterwards needs fresh granules.
#include "check.h"

#include <vector>

static size_t free_bytes() {
    size_t free = 0;
    size_t total = 0;
    CHECK(cudaMemGetInfo(&free, &total));
    return free;
}

int main() {
    print_device("fragmentation");
    const size_t block_bytes = 100000;
    const size_t large_bytes = 3000000;

    std::vector<void*> blocks(200);
    for (void*& block : blocks) {
        CHECK(cudaMalloc(&block, block_bytes));
    }
    const size_t free_when_full = free_bytes();

    for (size_t i = 0; i < blocks.size(); i += 2) {
        CHECK(cudaFree(blocks[i]));
        blocks[i] = nullptr;
    }
    const size_t free_after_frees = free_bytes();
    std::printf("fragmentation: freed %zu bytes in %zu holes; the device regained %zu bytes\n",
                blocks.size() / 2 * block_bytes, blocks.size() / 2,
                free_after_frees - free_when_full);

    void* large = nullptr;
    CHECK(cudaMalloc(&large, large_bytes));
    std::printf("fragmentation: the %zu-byte allocation took %zu more bytes of the device\n",
                large_bytes, free_after_frees - free_bytes());

    CHECK(cudaFree(large));
    for (void* block : blocks) {
        CHECK(cudaFree(block)); // cudaFree(nullptr) is a no-op
    }
    return 0;
}
