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

// A hash of the str's contents: CPython's own cached hash when it has one, else one of its
// characters. Equal contents may hash differently (cached or not); different contents
// collide only by chance. `ok` false when it is not a str.
uint64_t strContentHash(const Interpreter& interp, uintptr_t object, bool& ok);

// A hash of the bytes object's contents (length included).
uint64_t bytesContentHash(const Interpreter& interp, uintptr_t object, bool& ok);

// 64-bit hash of a byte range, seeded.
uint64_t hashBytes(const void* data, size_t size, uint64_t seed);

} // namespace gmt::preload::python
