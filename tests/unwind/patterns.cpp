#include "patterns.h"

#include <alloca.h>
#include <csignal>
#include <cstdlib>

namespace gmt_unwind_test {

// Defined in patterns_fp.cpp, built with frame pointers.
void opFramePointer(Plan* p, size_t pos);
void opFramePointerBig(Plan* p, size_t pos, unsigned param);
void step(Plan* p, size_t pos);

namespace {

// Keeps calls out of tail position and stores in place, so every frame stays on the stack.
#define KEEP() asm volatile("" ::: "memory")

volatile uint64_t g_sink;
thread_local Plan* t_plan;
thread_local size_t t_pos;

uint64_t nextJunk(Plan* p) {
    p->seed = p->seed * 6364136223846793005ull + 1442695040888963407ull;
    return p->seed;
}

__attribute__((noinline)) void opPlain(Plan* p, size_t pos) {
    step(p, pos + 1);
    KEEP();
}

__attribute__((noinline)) void opBig(Plan* p, size_t pos, unsigned param) {
    volatile char buf[512 + 16 * (param % 32)];
    buf[0] = 1;
    step(p, pos + 1);
    buf[1] = buf[0];
}

__attribute__((noinline)) void opAlloca(Plan* p, size_t pos, unsigned param) {
    char* a = static_cast<char*>(alloca(16 + 8 * (param % 64)));
    a[0] = 1;
    asm volatile("" ::"r"(a) : "memory");
    step(p, pos + 1);
    KEEP();
}

// rbp holds junk across the call, as in code built without frame pointers.
__attribute__((noinline)) void opJunkRbp(Plan* p, size_t pos) {
    uint64_t junk = nextJunk(p);
    asm volatile("mov %0, %%rbp" ::"r"(junk) : "rbp");
    step(p, pos + 1);
    KEEP();
}

__attribute__((noinline)) void opTwoSites(Plan* p, size_t pos, unsigned param) {
    if (param & 1) {
        step(p, pos + 1);
        g_sink = g_sink + 1;
    } else {
        g_sink = 3;
        step(p, pos + 1);
        g_sink = g_sink + 7;
    }
}

__attribute__((noinline)) void opLoop(Plan* p, size_t pos, unsigned param) {
    int reps = 1;
    if (param % 3 == 0 && p->extra_leaves > 0) {
        --p->extra_leaves;
        reps = 2;
    }
    for (int i = 0; i < reps; ++i) {
        step(p, pos + 1);
        KEEP();
    }
}

__attribute__((noinline)) void opLeafHere(Plan* p, size_t pos) {
    if (p->extra_leaves > 0) {
        --p->extra_leaves;
        p->leaf(p->ctx);
    }
    step(p, pos + 1);
    KEEP();
}

// A 64-byte aligned local makes GCC realign the stack: libunwind's "aligned" frames.
__attribute__((noinline)) void opAligned(Plan* p, size_t pos) {
    alignas(64) volatile char buf[64];
    buf[0] = 1;
    asm volatile("" ::"r"(buf) : "memory");
    step(p, pos + 1);
    buf[1] = buf[0];
}

__attribute__((noinline)) void opSignal(Plan* p, size_t pos, unsigned param) {
    t_plan = p;
    t_pos = pos + 1;
    raise(param & 1 ? SIGUSR2 : SIGUSR1);
    KEEP();
}

void onSignal(int) {
    step(t_plan, t_pos);
}

} // namespace

__attribute__((noinline)) void step(Plan* p, size_t pos) {
    if (pos >= p->n) {
        p->leaf(p->ctx);
        KEEP();
        return;
    }
    unsigned op = p->ops[pos] % 11;
    unsigned param = p->ops[pos] / 11;
    switch (op) {
    case 0:
        opPlain(p, pos);
        break;
    case 1:
        opBig(p, pos, param);
        break;
    case 2:
        opAlloca(p, pos, param);
        break;
    case 3:
        opJunkRbp(p, pos);
        break;
    case 4:
        opTwoSites(p, pos, param);
        break;
    case 5:
        opLoop(p, pos, param);
        break;
    case 6:
        opLeafHere(p, pos);
        break;
    case 7:
        opAligned(p, pos);
        break;
    case 8:
        opSignal(p, pos, param);
        break;
    case 9:
        opFramePointer(p, pos);
        break;
    default:
        opFramePointerBig(p, pos, param);
        break;
    }
    KEEP();
}

void runPlan(Plan* plan) {
    step(plan, 0);
}

void installSignalHandlers() {
    struct sigaction sa {};
    sa.sa_handler = onSignal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_NODEFER | SA_RESTART;
    sigaction(SIGUSR1, &sa, nullptr);
    sa.sa_flags = SA_NODEFER | SA_RESTART | SA_ONSTACK;
    sigaction(SIGUSR2, &sa, nullptr);
}

void* setupAltStack() {
    constexpr size_t kSize = size_t{4} << 20;
    void* mem = std::malloc(kSize);
    stack_t ss{};
    ss.ss_sp = mem;
    ss.ss_size = kSize;
    sigaltstack(&ss, nullptr);
    return mem;
}

void teardownAltStack(void* stack) {
    stack_t ss{};
    ss.ss_flags = SS_DISABLE;
    sigaltstack(&ss, nullptr);
    std::free(stack);
}

__attribute__((noinline)) void recurse(int depth, Leaf leaf, void* ctx) {
    if (depth > 0) {
        recurse(depth - 1, leaf, ctx);
        KEEP();
        return;
    }
    leaf(ctx);
    KEEP();
}

namespace {

__attribute__((noinline)) bool siteA(bool (*stepFn)(void*), void* ctx) {
    bool more = stepFn(ctx);
    KEEP();
    return more;
}

__attribute__((noinline)) bool siteB(bool (*stepFn)(void*), void* ctx) {
    bool more = siteA(stepFn, ctx);
    KEEP();
    return more;
}

__attribute__((noinline)) void alternate(bool (*stepFn)(void*), void* ctx) {
    while (siteA(stepFn, ctx) && siteB(stepFn, ctx)) {
        KEEP();
    }
}

} // namespace

__attribute__((noinline)) void recurseAlternating(int depth, bool (*stepFn)(void*), void* ctx) {
    if (depth > 0) {
        recurseAlternating(depth - 1, stepFn, ctx);
        KEEP();
        return;
    }
    alternate(stepFn, ctx);
    KEEP();
}

} // namespace gmt_unwind_test
