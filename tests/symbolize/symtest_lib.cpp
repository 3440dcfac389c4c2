// Built with -O0 so every probe call stays a real call at a predictable line; the
// always_inline function is inlined regardless of the optimisation level.
#include "symtest_lib.h"

namespace gmt::symtest {

[[gnu::noinline]] uintptr_t callerAddress() {
    return reinterpret_cast<uintptr_t>(__builtin_return_address(0)) - 1;
}

namespace {
Probe withOuterLine(Probe probe, int line) {
    probe.outer_line = line;
    return probe;
}
} // namespace

[[gnu::always_inline]] inline Probe inlinedHelper(int x) {
    return Probe{callerAddress(), __LINE__, 0, x};
}

[[gnu::noinline]] Probe outerFunction(int x) {
    return withOuterLine(inlinedHelper(x), __LINE__);
}

[[gnu::noinline]] Probe plainProbe() {
    return Probe{callerAddress(), __LINE__, 0};
}

} // namespace gmt::symtest
