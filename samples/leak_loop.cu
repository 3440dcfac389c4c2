// leak_loop: a leak inside a loop, the most common GPU memory leak.
//
// Each of 8 iterations allocates a 1234567-byte input and an 11001-byte result, runs a kernel,
// and frees the input. The result is freed only on even iterations, so the odd ones leak:
// 4 allocations of 11001 bytes (44004 bytes), all from the same line below.
#include "check.h"

__global__ void square(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[i] * in[i];
    }
}

static float* allocate_result(size_t bytes) {
    float* result = nullptr;
    CHECK(cudaMalloc(&result, bytes)); // the leaking allocation: this stack is the leak's
    return result;
}

int main() {
    print_device("leak_loop");
    const size_t input_bytes = 1234567;
    const size_t result_bytes = 11001;
    const int n = static_cast<int>(result_bytes / sizeof(float));

    for (int iteration = 0; iteration < 8; ++iteration) {
        float* input = nullptr;
        CHECK(cudaMalloc(&input, input_bytes));
        float* result = allocate_result(result_bytes);

        square<<<(n + 255) / 256, 256>>>(input, result, n);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());

        CHECK(cudaFree(input));
        if (iteration % 2 == 0) {
            CHECK(cudaFree(result));
        } // else: forgotten, leaked
    }
    std::printf("leak_loop: leaked 4 allocations of %zu bytes (%zu bytes)\n", result_bytes,
                4 * result_bytes);
    return 0;
}
