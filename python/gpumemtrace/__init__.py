"""gpumemtrace: GPU memory leaks of CUDA programs, from traces its recorder writes.

The wheel bundles the recorder (libgpumemtrace.so) and the CLI; the `gpumemtrace` command,
``python -m gpumemtrace`` and the pytest plugin (``pytest --gpumemtrace``) run them.
``load`` reads a report into Python objects (docs/packaging.md).
"""

from importlib import metadata

from gpumemtrace._cli import executable
from gpumemtrace.report import Node, Report, load

try:
    __version__ = metadata.version("gpumemtrace")
except metadata.PackageNotFoundError:  # a source checkout, not installed
    __version__ = "unknown"

__all__ = ["Node", "Report", "executable", "load", "__version__"]
