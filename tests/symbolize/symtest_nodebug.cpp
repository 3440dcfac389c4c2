// Built with -g0: the symbolizer can only name this function from the symbol table.
#include "symtest_lib.h"

namespace gmt::symtest {

namespace {
[[gnu::noinline]] uintptr_t ownCallerAddress() {
    return reinterpret_cast<uintptr_t>(__builtin_return_address(0)) - 1;
}
} // namespace

[[gnu::noinline]] uintptr_t symbolOnlyProbe() {
    return ownCallerAddress();
}

} // namespace gmt::symtest
