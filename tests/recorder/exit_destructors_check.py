#!/usr/bin/env python3
"""Checks that libgpumemtrace.so registers no destructor to run at exit (no call to
`__cxa_atexit`, which is how a static object with a destructor is registered).

exit() runs those destructors while the program's other threads may still be inside
traced CUDA calls (they run until exit_group ends the process), and a traced call reads the
recorder's tables: a table freed under it (a large one is unmapped) is a crash the tracer
would cause. So the recorder and its logger are constructed once and never destroyed
(preload/recorder.cpp, preload/logging.cpp); the trace is ended by finalize(), from the
library's destructor function, which frees nothing. This test fails when a build of the
library has such a static object again.

  exit_destructors_check.py LIBRARY     (objdump from binutils)
"""
import re
import sys

from traced_path_check import disassemble, lines_by_function

REGISTERS = re.compile(r"\bcall\s+\S+\s+<__cxa_atexit")
# Found in the disassembly, so that a library that could not be read cannot pass.
REQUIRED = "gmt::preload::Recorder::create()"


def registrations(disassembly):
    """The functions that call __cxa_atexit, and whether REQUIRED was seen."""
    found, seen = [], False
    for name, line in lines_by_function(disassembly):
        if line is None:
            seen = seen or name == REQUIRED
        elif REGISTERS.search(line):
            found.append(name)
    return found, seen


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found, seen = registrations(disassemble(sys.argv[1]))
    if not seen:
        print(f"{REQUIRED} not found in {sys.argv[1]}")
        return 1
    for name in found:
        print(f"registers a destructor to run at exit: {name}")
    print(f"{len(found)} functions of {sys.argv[1]} register a destructor to run at exit")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
