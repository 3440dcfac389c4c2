// Finding the CPython interpreter of the traced process, if it has one: its exported
// symbols (in the executable or a libpython found by dlsym(RTLD_DEFAULT)), its version,
// the layout to read it with, and a check with faultless reads that its memory looks as that
// layout says. No Python code runs, the GIL is never taken, nothing is allocated in it.
#pragma once

#include "layout.h"

#include <gpumemtrace/format/records.h>

#include <atomic>
#include <cstdint>

namespace gmt::preload::python {

struct Interpreter {
    format::PythonStatus status = format::PythonStatus::NotDetected;
    uint32_t version = 0; // PY_VERSION_HEX; 0 when unknown
    Layout layout;
    // PyGILState_GetThisThreadState: the calling thread's own thread state, from
    // thread-specific storage (no lock), whether or not the thread holds the GIL.
    void* (*this_thread_state)() = nullptr;
    int (*is_finalizing)() = nullptr;      // Py_IsFinalizing / _Py_IsFinalizing
    void* (*main_interpreter)() = nullptr; // PyInterpreterState_Main: a field read, no lock
    uintptr_t code_type = 0;               // &PyCode_Type
    uintptr_t str_type = 0;                // &PyUnicode_Type
    uintptr_t bytes_type = 0;              // &PyBytes_Type
    // _PyEval_EvalFrameDefault's code, [begin, end): native frames inside it are where
    // the Python frames it was running go. 0, 0 when its size is unknown.
    uintptr_t eval_begin = 0;
    uintptr_t eval_end = 0;
};

// Looks for the interpreter. `enabled` false (GPUMEMTRACE_PYTHON=0) only records the
// version. Status: NotDetected, Disabled, Unsupported (with the version), or Pending: found
// and readable in principle, to be checked on a thread that runs Python (checkThread).
Interpreter detectInterpreter(bool enabled);

// The check, on the calling thread: its thread state belongs to the main interpreter, and
// every frame of its chain holds a code object whose fields have the types they should.
enum class Check { Passed, Failed, NothingToCheck };
Check checkThread(const Interpreter& interp, uintptr_t tstate);

} // namespace gmt::preload::python
