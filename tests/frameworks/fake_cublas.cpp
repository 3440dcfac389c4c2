// A stand-in for libcublas.so.13 in the tests of the built-in suppressions: its handle
// allocates a workspace the first time it is used, as cuBLAS does, and keeps it until
// cublasDestroy_v2, which the test program (like the frameworks) never calls.
#include <cuda_runtime_api.h>

#include <cstddef>

namespace {
struct Handle {
    void* workspace = nullptr;
};
Handle g_handle;
} // namespace

extern "C" __attribute__((visibility("default"), noinline)) int cublasCreate_v2(void** handle) {
    *handle = &g_handle;
    return 0;
}

extern "C" __attribute__((visibility("default"), noinline)) int cublasSgemm_v2(void* handle) {
    auto* h = static_cast<Handle*>(handle);
    if (!h->workspace && cudaMalloc(&h->workspace, 4 << 20) != cudaSuccess) {
        return 3;
    }
    return 0;
}
