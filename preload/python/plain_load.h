// A value at an address of the interpreter's memory, read the fast way: an unaligned-safe
// plain load. Only for memory the checked layout says is there (interpreter.h's check ran
// on it first); the faultless reads are in safe_memory.h.
#pragma once

#include <cstdint>
#include <cstring>

namespace gmt::preload::python {

template <typename T> T load(uintptr_t address) {
    T v;
    std::memcpy(&v, reinterpret_cast<const void*>(address), sizeof v);
    return v;
}

} // namespace gmt::preload::python
