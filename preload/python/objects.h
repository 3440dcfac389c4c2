// Reading str and bytes objects through a checked layout, without any CPython function:
// a str's code points (1, 2 or 4 bytes each) become UTF-8 here. Plain loads: only for
// objects a live code object of the calling thread holds.
#pragma once

#include "interpreter.h"

#include <cstdint>
#include <string>

namespace gmt::preload::python {

// The UTF-8 text of the str at `object`, at most `max_bytes` long; false when it is not a
// str (or one whose characters are not where a compact or ready str keeps them).
bool readStr(const Interpreter& interp, uintptr_t object, size_t max_bytes, std::string& out);

// The bytes of the bytes object at `object`, at most `max_bytes`.
bool readBytes(const Interpreter& interp, uintptr_t object, size_t max_bytes, std::string& out);

// Where an object's contents lie, as stored: a str's characters (1, 2 or 4 bytes each, its
// `kind`), a bytes object's bytes. At most kMaxContentBytes, whatever the header says: a
// corrupt length must not walk through memory, and telling objects apart needs no more.
struct Contents {
    uintptr_t data = 0;
    size_t size = 0;   // bytes
    uint32_t kind = 1; // str: bytes per character
};
inline constexpr size_t kMaxContentBytes = 64 * 1024;

bool strContents(const Interpreter& interp, uintptr_t object, Contents& out);
bool bytesContents(const Interpreter& interp, uintptr_t object, Contents& out);

// 64-bit hash of a byte range, seeded.
uint64_t hashBytes(const void* data, size_t size, uint64_t seed);

} // namespace gmt::preload::python
