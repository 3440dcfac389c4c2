// Code with known source positions for the symbolizer tests. Each probe returns the
// address a recorder would have stored for a call made inside it (return address - 1)
// together with the source lines that address must map to.
#pragma once

#include <cstdint>

namespace gmt::symtest {

struct Probe {
    uintptr_t address = 0;
    int inner_line = 0; // line of the call inside the innermost (possibly inlined) function
    int outer_line = 0; // line where the inlined function is called from, 0 if none
    int value = 0;      // echoes the argument so the inlined body does some work of its own
};

// The caller's address inside the calling function, as the recorder stores it.
uintptr_t callerAddress();

// A probe inside an always_inline function inlined into outerFunction.
Probe outerFunction(int x);

// A probe in an ordinary function: one frame.
Probe plainProbe();

// From a library built without debug info: only its symbol table knows it.
uintptr_t symbolOnlyProbe();

} // namespace gmt::symtest
