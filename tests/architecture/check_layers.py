#!/usr/bin/env python3
"""The analyzer's stages link only downward: refuse an include that runs upward.

Each stage is a top-level folder of analyzer/ and one CMake library (analyzer/CMakeLists.txt,
gmt_stage). The stages a stage may include are the ones its library links, directly or
through them, as CMake wrote them to STAGES (lines `stage: linked-stage ...`). A file's
stage is its first folder below analyzer/ (analysis/caching/x.h is in `analysis`); the
files at the root (main.cpp) may include any stage. An include names its room from the
analyzer's root ("read/trace_reader.h"); a quoted include that does not is refused too, so
no file can reach a header by a path that hides its stage.

    check_layers.py STAGES ANALYZER_DIR   exit 0: clean; 1: violations listed on stderr
"""
import os
import re
import sys

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', re.M)
SOURCE = (".h", ".cpp", ".inc")


def read_stages(path):
    links = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, deps = line.partition(":")
            links[name.strip()] = set(deps.split())
    return links


def closure(links):
    """Every stage's reachable stages; raises on a cycle (stages must form a ladder)."""
    done, visiting, reach = set(), set(), {}

    def visit(s, path):
        if s in done:
            return reach[s]
        if s in visiting:
            raise ValueError("stages link in a circle: " + " -> ".join(path + [s]))
        visiting.add(s)
        r = set()
        for d in links.get(s, ()):
            if d not in links:
                raise ValueError(f"stage {s} links {d}, which is no stage")
            r |= {d} | visit(d, path + [s])
        visiting.discard(s)
        done.add(s)
        reach[s] = r
        return r

    for s in links:
        visit(s, [])
    return reach


def violations(links, root):
    reach = closure(links)
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "node_modules"]
        for name in sorted(filenames):
            if not name.endswith(SOURCE):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, root)
            parts = rel.split(os.sep)
            stage = parts[0] if len(parts) > 1 else None
            if stage is not None and stage not in links:
                found.append(f"{rel}: folder {stage}/ is no stage (add it with gmt_stage)")
                continue
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for m in INCLUDE.finditer(text):
                target = m.group(1)
                line = text.count("\n", 0, m.start()) + 1
                first = target.split("/")[0]
                if first not in links:
                    # A generated file (cuda_error_names.inc) or a header outside the
                    # analyzer (the trace format) has no stage; a path that reaches an
                    # analyzer header from below its stage folder hides its room.
                    if any(os.path.exists(os.path.join(root, s, target)) for s in links):
                        found.append(f"{rel}:{line}: include \"{target}\" by its stage "
                                     f"folder (\"STAGE/{target}\")")
                    continue
                if stage is None or first == stage or first in reach[stage]:
                    continue
                found.append(f"{rel}:{line}: {stage}/ includes {target}, but stage {stage} "
                             f"does not link {first} (it links: "
                             f"{', '.join(sorted(reach[stage])) or 'nothing'})")
    return found


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        links = read_stages(argv[1])
        found = violations(links, argv[2])
    except (OSError, ValueError) as e:
        print(f"check_layers: {e}", file=sys.stderr)
        return 1
    for v in found:
        print(v, file=sys.stderr)
    if found:
        print(f"check_layers: {len(found)} include(s) run against the stages "
              "(docs/architecture.md)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
