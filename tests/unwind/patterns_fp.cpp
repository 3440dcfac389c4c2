// Built with -fno-omit-frame-pointer: frames whose CFA libunwind finds from rbp.
#include "patterns.h"

namespace gmt_unwind_test {

void step(Plan* p, size_t pos);

__attribute__((noinline)) void opFramePointer(Plan* p, size_t pos) {
    step(p, pos + 1);
    asm volatile("" ::: "memory");
}

__attribute__((noinline)) void opFramePointerBig(Plan* p, size_t pos, unsigned param) {
    volatile char buf[256 + 32 * (param % 16)];
    buf[0] = 1;
    step(p, pos + 1);
    buf[1] = buf[0];
}

} // namespace gmt_unwind_test
