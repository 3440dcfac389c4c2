// The native half of scripts/bench-blocks.sh's workload (tests/bench/block_step.py): a
// stand-in for PyTorch's operator dispatch between Python and the caching allocator, so that
// every block event the recorder sees comes with a realistic native stack. PyTorch reaches
// its allocator from a Python line through the binding, the dispatcher's layers (autograd,
// ADInplaceOrView, the backend kernel) and the tensor factory: a few dozen frames, different
// for each operator near the top and shared below. Here each operator is a chain of
// kAllocDepth distinct functions (its own return addresses, as distinct C++ functions have)
// ending in the stand-in libc10_cuda.so's allocator (tests/frameworks/fake_c10_cuda.cpp);
// a free is a shorter chain shared by every tensor (a tensor's release is the same code
// whatever made it), as PyTorch's deleter is.
//
// The allocator's functions are handed in by address (block_ops_init), from the stand-in
// that Python loaded RTLD_LOCAL, as PyTorch's Python side loads its libraries: this library
// links nothing of it.
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#define BLOCK_OPS_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using MallocFn = void* (*)(size_t, void*);
using FreeFn = void (*)(void*);
MallocFn g_malloc = nullptr;
FreeFn g_free = nullptr;

// Frames between the binding and the allocator, per operator (PyTorch's own depth for an
// eager op on CUDA, from the binding to the caching allocator's malloc, is of this order).
constexpr int kAllocDepth = 24;
// Frames of a tensor's release, from the reference count's drop to the allocator's free.
constexpr int kFreeDepth = 10;
constexpr int kOps = 16;

// Frame LEVEL of operator OP's chain: one distinct function per (OP, LEVEL). The empty asm
// after each call keeps it from being a tail call (which would drop the frame).
template <int Op, int Level> struct AllocChain {
    [[gnu::noinline]] static void* call(size_t bytes, void* stream) {
        void* p = AllocChain<Op, Level - 1>::call(bytes, stream);
        asm volatile("" ::: "memory");
        return p;
    }
};
template <int Op> struct AllocChain<Op, 0> {
    [[gnu::noinline]] static void* call(size_t bytes, void* stream) {
        void* p = g_malloc(bytes, stream);
        asm volatile("" ::: "memory");
        return p;
    }
};

template <int Level> struct FreeChain {
    [[gnu::noinline]] static void call(void* p) {
        FreeChain<Level - 1>::call(p);
        asm volatile("" ::: "memory");
    }
};
template <> struct FreeChain<0> {
    [[gnu::noinline]] static void call(void* p) {
        g_free(p);
        asm volatile("" ::: "memory");
    }
};

template <int... Ops> constexpr auto opTable(std::integer_sequence<int, Ops...>) {
    return std::array<MallocFn, sizeof...(Ops)>{&AllocChain<Ops, kAllocDepth>::call...};
}
constexpr auto kOpTable = opTable(std::make_integer_sequence<int, kOps>{});

} // namespace

BLOCK_OPS_EXPORT void block_ops_init(void* malloc_fn, void* free_fn) {
    g_malloc = reinterpret_cast<MallocFn>(malloc_fn);
    g_free = reinterpret_cast<FreeFn>(free_fn);
}

BLOCK_OPS_EXPORT int block_ops_count() {
    return kOps;
}

// A tensor of `bytes` made by operator `op` (taken modulo the number of operators).
BLOCK_OPS_EXPORT void* block_op(int op, size_t bytes) {
    return kOpTable[static_cast<size_t>(op) % kOps](bytes, nullptr);
}

BLOCK_OPS_EXPORT void block_release(void* p) {
    FreeChain<kFreeDepth>::call(p);
}
