// Reading this process's own memory without the risk of a fault: for checking, once, that
// the interpreter's memory looks as its version says before anything is read the fast way.
// Never on the per-event path (each read is a system call).
#pragma once

#include <cstddef>
#include <cstdint>

namespace gmt::preload::python {

// Copies `size` bytes at `address` into `out`. False, with nothing faulting, when any of
// them is not readable.
bool safeRead(uintptr_t address, void* out, size_t size);

// One value of type T at `address`.
template <typename T> bool safeReadValue(uintptr_t address, T& out) {
    return safeRead(address, &out, sizeof out);
}

} // namespace gmt::preload::python
