#!/usr/bin/env python3
"""How deep a trace's recorded native stacks are, and how many reached the depth limit.

    scripts/stack-depths.py [--cli GPUMEMTRACE] TRACE...

A stack that reached the limit (GPUMEMTRACE_STACK_DEPTH, the trace header's stack_depth) lost
its outer frames. For each trace this prints the limit, the stacks recorded and how many of
them reached it, then one markdown row per kind of event (event and API, as `gpumemtrace
dump` names them): the events with a stack, the native depth of those stacks (min, median,
max), how many reached the limit, and how many carry Python frames. A stack the recorder
cut is no deeper than the limit, so record once more with a larger GPUMEMTRACE_STACK_DEPTH
(up to 256) to see how deep the program's stacks really are (docs/performance.md, "The id
of a repeated stack").

The trace is read through `gpumemtrace dump` (--cli, default: `gpumemtrace` on PATH).
Exit status: 0, or 2 when a trace cannot be read.
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict


class Kind:
    def __init__(self):
        self.events = 0
        self.depths = []  # native depth of each event's stack
        self.python = 0  # events whose stack has Python frames


def summarize(lines):
    """(limit, {stack id: (native depth, python depth)}, {kind: Kind}) from dump lines."""
    limit = None
    stacks = {}
    kinds = defaultdict(Kind)
    for line in lines:
        r = json.loads(line)
        if not isinstance(r, dict):
            raise ValueError("a line that is no JSON object")
        record = r.get("record")
        if record == "header":
            limit = r.get("stack_depth")
        elif record == "stack":
            stacks[r.get("id")] = (len(r.get("frames") or []), len(r.get("python") or []))
        elif record == "event":
            k = kinds["%s/%s" % (r.get("event"), r.get("api"))]
            k.events += 1
            stack = stacks.get(r.get("stack") or 0)
            if stack:
                k.depths.append(stack[0])
                k.python += 1 if stack[1] else 0
    return limit, stacks, kinds


def report(path, limit, stacks, kinds, out):
    at_limit = lambda depths: sum(1 for d in depths if limit and d >= limit)
    out.write("%s: stack depth limit %s; %d stacks, %d of them at the limit\n\n" %
              (path, limit if limit is not None else "unknown (no header)", len(stacks),
               at_limit([d for d, _ in stacks.values()])))
    out.write("| event | events | with a stack | native depth min / median / max | "
              "at the limit | with Python frames |\n|---|---:|---:|---|---:|---:|\n")
    for name, k in sorted(kinds.items(), key=lambda kv: (-kv[1].events, kv[0])):
        if k.depths:
            depth = "%d / %g / %d" % (min(k.depths), statistics.median(k.depths), max(k.depths))
            n = at_limit(k.depths)
            share = "%d (%.1f %%)" % (n, 100.0 * n / len(k.depths))
        else:
            depth, share = "-", "-"
        out.write("| %s | %d | %d | %s | %s | %d |\n" %
                  (name, k.events, len(k.depths), depth, share, k.python))
    out.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--cli", default="gpumemtrace", help="the gpumemtrace binary")
    ap.add_argument("traces", nargs="+", metavar="TRACE")
    args = ap.parse_args()
    status = 0
    for path in args.traces:
        # Its messages go to a file, not a pipe: a pipe nobody reads while the dump is read
        # would stop the dump once full.
        with tempfile.TemporaryFile(mode="w+") as errors:
            try:
                dump = subprocess.Popen([args.cli, "dump", path], stdout=subprocess.PIPE,
                                        stderr=errors, text=True)
            except OSError as e:
                sys.stderr.write("stack-depths: cannot run %s: %s\n" % (args.cli, e))
                return 2
            with dump:
                try:
                    result = summarize(dump.stdout)
                except ValueError as e:  # not JSON lines: not a gpumemtrace dump
                    dump.kill()
                    sys.stderr.write("stack-depths: %s: unreadable dump: %s\n" % (path, e))
                    status = 2
                    continue
            errors.seek(0)
            error = errors.read()
        if dump.returncode != 0:
            sys.stderr.write("stack-depths: %s: %s" % (path, error or "dump failed\n"))
            status = 2
            continue
        report(path, *result, sys.stdout)
    return status


if __name__ == "__main__":
    sys.exit(main())
