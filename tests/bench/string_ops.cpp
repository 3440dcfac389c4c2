// What the two string operations of every traced call cost, built twice: with GCC's
// default expansion (string_ops_generic: `rep stosq` / `rep movsq`) and with the recorder's
// own flags (string_ops_recorder, linked with gmt_recorder_core: preload/CMakeLists.txt).
// A microbenchmark that explains a figure of scripts/bench-recorder.sh, not a headline:
//
//   zero:  an Event value-initialised on the stack, as every hook does before filling it;
//   copy:  61 frames copied out of a remembered stack (unwind_cache.cpp's copy-out), a
//          count known only at run time, at most 64.
//
//   string_ops_{generic,recorder} [CALLS=50000000 [FRAMES=61]]
#include <gpumemtrace/format/event.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

uint64_t g_from[64];
uint64_t g_to[64];

__attribute__((noinline)) void use(const void* p) {
    asm volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline)) void zeroEvent(uint64_t i) {
    gmt::format::Event e;
    e.size = i;
    e.op = gmt::format::Op::Free;
    use(&e);
}

__attribute__((noinline)) void copyFrames(unsigned n) {
    if (n > 64) {
        __builtin_unreachable(); // what the unwinder knows of its count
    }
    std::memcpy(g_to, g_from, n * sizeof(uint64_t));
    use(g_to);
}

template <typename F> double nsPerCall(long calls, F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < calls; ++i) {
        f(i);
    }
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(calls);
}

} // namespace

int main(int argc, char** argv) {
    const long calls = argc > 1 ? std::atol(argv[1]) : 50000000;
    // A count from outside, as the unwinder's: the compiler cannot expand the copy for it.
    const int frames = argc > 2 ? std::atoi(argv[2]) : 61;
    if (calls <= 0 || frames < 0 || frames > 64) {
        std::fprintf(stderr, "usage: %s [CALLS > 0 [FRAMES 0-64]]\n", argv[0]);
        return 2;
    }
    std::printf("zero_event_ns %.2f\n", nsPerCall(calls, [](long i) { zeroEvent(i); }));
    std::printf("copy_%d_frames_ns %.2f\n", frames,
                nsPerCall(calls, [frames](long) { copyFrames(static_cast<unsigned>(frames)); }));
    return 0;
}
