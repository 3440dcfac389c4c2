#!/usr/bin/env python3
"""Checks that the traced path of libgpumemtrace.so holds no `rep stos` / `rep movs` and
calls no `__tls_get_addr`.

GCC's generic tuning expands a memset or memcpy of a few hundred bytes, or of a size known
only at run time, as a `rep` string instruction, whose start-up costs more than the work at
these sizes: every hook's Event and every repeated stack's copy-out paid it
(docs/performance.md, "String instructions on the traced path"). preload/CMakeLists.txt
asks for other expansions.

The recorder's thread-local caches use the initial-exec model: one load relative to the
thread pointer. A thread_local with a dynamic initializer has a guard, and the guard is
reached through `__tls_get_addr` whatever the model: the Python code table's cache had one,
a call per Python frame of every event (docs/performance.md, "Python stacks"). This test
fails when a build of the library has either again.

  traced_path_check.py LIBRARY     (objdump from binutils)
"""
import re
import subprocess
import sys

# The functions every traced call runs through, as objdump -C names them: the exported
# CUDA hooks (whose traced path is inlined into them), the recorder's own, the unwinder,
# the stack table, the Python frames (walked and interned) and the PyTorch allocator's hook.
TRACED_PATH = [
    re.compile(r"^(cuda|cu)[A-Z][A-Za-z0-9_]*$"),
    re.compile(r"^gmt::preload::Recorder::(record|reserve|commit)\("),
    re.compile(r"^gmt::preload::\(anonymous namespace\)::publishEvent\("),
    re.compile(r"^gmt::preload::captureStack\("),
    re.compile(r"^gmt::preload::unwind::trace\("),
    re.compile(r"^gmt::preload::StackTable::intern\("),
    re.compile(r"^gmt::preload::python::PythonStacks::(read|place)\("),
    re.compile(r"^gmt::preload::python::(walkFrames|CodeTable::intern(One)?)\("),
    re.compile(r"^gmt::preload::frameworks::\(anonymous namespace\)::onTraceEntry\("),
]
# The functions the check must find, so that a renamed function cannot pass it by absence.
REQUIRED = ["cudaMalloc", "cudaFree", "cuMemAlloc_v2", "cuMemFree_v2",
            "gmt::preload::Recorder::record(", "gmt::preload::unwind::trace(",
            "gmt::preload::python::walkFrames(", "gmt::preload::python::CodeTable::internOne(",
            "gmt::preload::frameworks::(anonymous namespace)::onTraceEntry("]
SLOW = re.compile(r"\brep[a-z]*\s+(stos|movs)|\bcall\s+\S+\s+<__tls_get_addr")
HEADER = re.compile(r"^[0-9a-f]+ <(.*)>:$")


def lines_by_function(disassembly):
    """(function, instruction line) for each instruction, and (function, None) at each
    function's header, as objdump -C names the function (exit_destructors_check.py too)."""
    current = None
    for line in disassembly.splitlines():
        m = HEADER.match(line)
        if m:
            current = m.group(1)
            yield current, None
        elif current:
            yield current, line


def offenders(disassembly):
    """(function, instruction) of every rep string instruction and every call to
    __tls_get_addr in a traced-path function, and the traced-path functions seen."""
    found, seen = [], set()
    for name, line in lines_by_function(disassembly):
        if not any(p.search(name) for p in TRACED_PATH):
            continue
        if line is None:
            seen.add(name)
        elif SLOW.search(line):
            found.append((name, line.strip()))
    return found, seen


def disassemble(library):
    """objdump's disassembly of `library`, names demangled (exit_destructors_check.py too)."""
    return subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", library],
                          capture_output=True, text=True, check=True).stdout


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    found, seen = offenders(disassemble(sys.argv[1]))
    missing = [r for r in REQUIRED if not any(s == r or s.startswith(r) for s in seen)]
    if missing:
        print(f"functions of the traced path not found in {sys.argv[1]}: {missing}")
        return 1
    for name, insn in found:
        print(f"{name}: {insn}")
    print(f"{len(seen)} functions of the traced path, {len(found)} rep string instructions "
          f"or calls to __tls_get_addr")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
