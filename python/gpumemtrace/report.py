"""`gpumemtrace.load(path)`: a report as Python objects.

The objects mirror the JSON of `gpumemtrace report --format json` field for field
(docs/report.schema.json): objects are Nodes whose members read as attributes
(``report.summary.leaked_bytes``) or items (``report["summary"]``), arrays are lists.
"""

import html
import json
import os
import subprocess
import tempfile

from gpumemtrace._cli import executable


class Node:
    """One JSON object of the report; members as attributes, as items, or as ``to_dict()``."""

    __slots__ = ("_data",)

    def __init__(self, data):
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name):
        try:
            return _wrap(self._data[name])
        except KeyError:
            raise AttributeError(name) from None

    def __getitem__(self, name):
        return _wrap(self._data[name])

    def __contains__(self, name):
        return name in self._data

    def __iter__(self):
        return iter(self._data)

    def __dir__(self):
        return list(self._data)

    def __eq__(self, other):
        return isinstance(other, Node) and self._data == other._data

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, ", ".join(self._data))

    def to_dict(self):
        """The JSON object itself (not a copy)."""
        return self._data


def _wrap(value):
    if isinstance(value, dict):
        return Node(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


class Report(Node):
    """A whole report; shown in Jupyter as the HTML report of the traces it was read from."""

    __slots__ = ("_sources",)

    def __init__(self, data, sources=()):
        super().__init__(data)
        object.__setattr__(self, "_sources", tuple(sources))

    def html(self):
        """The self-contained HTML report (`gpumemtrace report --format html`) of the traces;
        a report read from saved JSON has none, and shows its summary instead."""
        if not self._sources:
            return ("<pre>gpumemtrace report (from JSON; load the traces for the HTML "
                    "report)\n%s</pre>" % html.escape(json.dumps(self._data["summary"],
                                                                 indent=2)))
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "report.html")
            _run_cli(["report", *self._sources, "--format", "html", "-o", out])
            with open(out, encoding="utf-8") as f:
                return f.read()

    def _repr_html_(self):
        return self.html()


def _run_cli(args):
    run = subprocess.run([executable(), *args], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError("gpumemtrace %s failed (exit %d): %s"
                           % (args[0], run.returncode, run.stderr.strip()))
    return run.stdout


def load(*paths):
    """The report of traces (files or directories, as `gpumemtrace report` takes them), or a
    report saved with `gpumemtrace report --format json -o FILE.json`."""
    if not paths:
        raise TypeError("load() needs a trace, a directory of traces or a saved JSON report")
    paths = [os.fspath(p) for p in paths]
    if len(paths) == 1 and paths[0].endswith(".json") and os.path.isfile(paths[0]):
        with open(paths[0], encoding="utf-8") as f:
            return Report(json.load(f))
    return Report(json.loads(_run_cli(["report", *paths, "--format", "json"])), paths)
