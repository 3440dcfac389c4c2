"""The CLI the wheel bundles: its path, and the `gpumemtrace` console command that runs it."""

import os
import sys

# The wheel's own prefix, laid out as a CMake install is (bin/gpumemtrace,
# lib/libgpumemtrace.so), so the CLI finds the preload library as it does there
# (analyzer/cli/preload_locator.cpp: ../lib next to the executable).
PREFIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_prefix")
EXECUTABLE = os.path.join(PREFIX, "bin", "gpumemtrace")


def executable():
    """The bundled CLI; a source checkout without a built wheel has none."""
    if not os.access(EXECUTABLE, os.X_OK):
        raise FileNotFoundError(
            "the gpumemtrace executable is not bundled here (%s): install the wheel "
            "(scripts/package.sh builds it)" % EXECUTABLE)
    return EXECUTABLE


def main(argv=None):
    """`gpumemtrace ARGS...` and `python -m gpumemtrace ARGS...`: replaced by the CLI, so its
    exit status and signals are the command's own."""
    args = sys.argv[1:] if argv is None else list(argv)
    path = executable()
    os.execv(path, [path, *args])
