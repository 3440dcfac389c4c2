"""The `caching` group of scripts/gpu-validate.sh: PyTorch's caching allocator in its default
mode against gpumemtrace's two levels (docs/frameworks.md), with tests/gpu/torch_caching.py:

- a training script passes `gpumemtrace check` with no options;
- the tensor-level peak is torch.cuda.max_memory_allocated(), the segment-level peak
  max_memory_reserved(), and the free space inside the segments at the tensor peak is
  reserved - allocated (and inactive_split_bytes) of memory_stats() at that moment;
- a list that keeps a tensor every step: what PyTorch frees at exit, and how it is reported;
  kept until the process ends (os._exit), `check` fails naming the planted line; either way
  the list is growth at the planted line (`check --max-growth 0` fails), and the training
  loop alone is not;
- a fragmentation OOM is diagnosed as fragmentation inside segments, the hint names
  expandable_segments; the same run with expandable_segments:True, and what happened.

Every check is independent (one that cannot run is a FAIL row with its reason); logs,
reports, dumps and check outputs land in OUT/logs.
"""
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAM = HERE.parent / "tests" / "gpu" / "torch_caching.py"


def marker_lines():
    lines = {}
    for number, text in enumerate(PROGRAM.read_text().splitlines(), 1):
        m = re.search(r"# LINE:(\w+)", text)
        if m:
            lines[m.group(1)] = number
    return lines


def run(env, name, scenario, extra=None):
    """Runs one scenario traced: (info, trace) or raises with the reason."""
    p, traces, _ = env.record(name, [sys.executable, str(PROGRAM), scenario], extra=extra,
                              timeout=900)
    if p.returncode != 0 or len(traces) != 1 or not p.stdout.strip():
        raise RuntimeError(f"rc={p.returncode}, {len(traces)} traces: {p.stderr[-400:]}")
    return json.loads(p.stdout.strip().splitlines()[-1]), traces[0]


def check(env, name, trace, *options):
    p, _ = env.run(f"{name}.check", [str(env.cli), "check", *options, str(trace)],
                   env=env.cli_env)
    return p.returncode, p.stdout


def caching_of(rep):
    c = rep.get("caching_allocator")
    if not c or len(c["processes"]) != 1:
        raise RuntimeError(f"no caching allocator section: {c and c['processes']}")
    return c


def python_lines(stack):
    return [f["line"] for f in stack
            if f.get("language") == "python" and Path(f["file"]).name == "torch_caching.py"]


def guarded(row, name, fn):
    try:
        fn()
    except Exception as exc:  # a check that cannot run is a failed check, with its reason
        row(name, False, repr(exc)[:400])


def check_caching(env, row):
    lines = marker_lines()

    def train():
        info, trace = run(env, "caching_train", "train")
        rep = env.report([trace], "caching_train", top=50)
        c = caching_of(rep)
        a = c["processes"][0]
        row("caching: attached to PyTorch's allocator", a["status"] == "attached",
            f"status {a['status']} ({a['detail']}), version {a['version']} (torch {info['torch']}), "
            f"sizes exact {a['sizes_exact']}, estimated blocks {a['estimated_blocks']}, "
            f"unmatched events {a['unmatched_events']}")
        rc, out = check(env, "caching_train", trace)
        row("caching: default-mode training passes check", rc == 0,
            f"rc={rc}: " + " / ".join(l.strip() for l in out.splitlines() if l.strip())[:600])
        rc_g, _ = check(env, "caching_train_growth", trace, "--max-growth", "0")
        row("caching: the training loop does not grow (check --max-growth 0 passes)", rc_g == 0,
            f"rc={rc_g}; iterations {[(i['source'], i['boundaries']) for i in rep['iterations']]};"
            f" growing {[(g['bytes_per_iteration'], python_lines(g['stack'])) for g in rep['growth'][:4]]}")
        d = a["devices"][0]
        row("caching: tensor-level peak = max_memory_allocated()",
            d["allocated_peak_bytes"] == info["max_memory_allocated"],
            f"traced {d['allocated_peak_bytes']} B, PyTorch {info['max_memory_allocated']} B")
        row("caching: segment-level peak = max_memory_reserved()",
            d["reserved_peak_bytes"] == info["max_memory_reserved"],
            f"traced {d['reserved_peak_bytes']} B, PyTorch {info['max_memory_reserved']} B")
        peak = info["at_peak"]
        frag = c["fragmentation"]
        if not frag:
            raise RuntimeError("no measurement at the tensor peak")
        f = frag[0]
        want = peak["reserved_bytes.all.current"] - peak["allocated_bytes.all.current"]
        at_probe = lines["probe"] in python_lines(c["tensor_peak"]["top_sites"][0]["stack"]) \
            if c["tensor_peak"]["top_sites"] else False
        row("caching: inside-segment fragmentation at the peak = reserved - allocated",
            f["reserved_unallocated_bytes"] == want and f["exact"],
            f"traced reserved-unallocated {f['reserved_unallocated_bytes']} B (reserved "
            f"{f['reserved_bytes']}, allocated {f['allocated_bytes']}, exact {f['exact']}); "
            f"memory_stats() then {want} B (reserved {peak['reserved_bytes.all.current']}, "
            f"allocated {peak['allocated_bytes.all.current']}); peak's top site at the probe "
            f"line {lines['probe']}: {at_probe}")
        row("caching: inactive split blocks at the peak", None,
            f"traced {f['inactive_split_blocks']} blocks / {f['inactive_split_bytes']} B, "
            f"memory_stats() {peak['inactive_split.all.current']} / "
            f"{peak['inactive_split_bytes.all.current']} B; largest free block "
            f"{f['largest_free_bytes']} B")
        row("caching: held at exit and freed by the interpreter", None,
            f"held_at_exit {[(h['allocator'], h['bytes']) for h in rep['held_at_exit']]}, "
            f"reserved at the end {info['end']['reserved_bytes.all.current']} B; blocks freed "
            f"at interpreter exit {a['exit_freed_bytes']} B in {a['exit_freed_blocks']}; "
            f"leaks {[(l['kind'], l['bytes'], l['api']) for l in rep['leaks'][:5]]}")

    def expandable():
        info, trace = run(env, "caching_expandable", "train",
                          {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})
        rep = env.report([trace], "caching_expandable")
        d = caching_of(rep)["processes"][0]["devices"][0]
        ok = (d["allocated_peak_bytes"] == info["max_memory_allocated"] and
              d["reserved_peak_bytes"] == info["max_memory_reserved"])
        rc, _ = check(env, "caching_expandable", trace)
        row("caching: expandable segments, both peaks", ok,
            f"allocated {d['allocated_peak_bytes']} / {info['max_memory_allocated']} B, reserved "
            f"{d['reserved_peak_bytes']} / {info['max_memory_reserved']} B; check rc={rc}")

    def planted():
        info, trace = run(env, "caching_planted", "planted")
        rep = env.report([trace], "caching_planted", top=50)
        a = caching_of(rep)["processes"][0]
        sites = [s for s in a["exit_freed_top_sites"] if lines["planted"] in python_lines(s["stack"])]
        rc, out = check(env, "caching_planted", trace)
        row("caching: planted list, freed by the interpreter at exit", bool(sites),
            f"kept {info['kept_bytes']} B; freed at exit from line {lines['planted']}: "
            f"{[(s['bytes'], s['allocations']) for s in sites]}; check rc={rc} (a leak at exit "
            f"only if PyTorch did not free it; growth otherwise)")
        growing = [(g["bytes_per_iteration"], g["growing_iterations"], g["iterations"],
                    python_lines(g["stack"])) for g in rep["growth"]]
        at_line = [g for g in growing if lines["planted"] in g[3]]
        rc_g, out_g = check(env, "caching_planted_growth", trace, "--max-growth", "0")
        named = f"torch_caching.py:{lines['planted']}" in out_g
        row("caching: planted list is growth at the planted line (check --max-growth 0 fails)",
            rc_g == 1 and named and len(at_line) == 1,
            f"iterations {[(i['source'], i['boundaries']) for i in rep['iterations']]}; growing "
            f"(bytes/iteration, grew, of, lines) {growing[:4]}; check --max-growth 0 rc={rc_g}, "
            f"names torch_caching.py:{lines['planted']}: {named}")

    def planted_kept():
        info, trace = run(env, "caching_planted_kept", "planted_kept")
        rc, out = check(env, "caching_planted_kept", trace)
        named = f"torch_caching.py:{lines['planted']}" in out
        rep = env.report([trace], "caching_planted_kept", top=50)
        blocks = [(l["bytes"], l["allocations"], python_lines(l["stack"]))
                  for l in rep["leaks"] if l["kind"] == "block"]
        row("caching: planted tensors kept until the end fail check at the planted line",
            rc == 1 and named,
            f"rc={rc}, names torch_caching.py:{lines['planted']}: {named}; kept "
            f"{info['kept_bytes']} B; tensor-level leaks (bytes, blocks, lines) {blocks[:6]}")

    def oom(name, extra):
        info, trace = run(env, name, "oom", extra)
        rep = env.report([trace], name)
        ooms = caching_of(rep)["ooms"]
        at_line = [o for o in ooms if lines["oom"] in python_lines(o["stack"])]
        return info, at_line, ooms

    def oom_default():
        info, at_line, ooms = oom("caching_oom", None)
        if not info["oom"] or not at_line:
            raise RuntimeError(f"no OOM at line {lines['oom']}: raised {info['oom']}, "
                               f"{len(ooms)} OOM events")
        o = at_line[0]
        hint = next(h for h in o["hints"] if h["remedy"] == "expandable_segments")
        row("caching: fragmentation OOM diagnosed, hint names expandable_segments",
            o["fragmentation"] and
            hint["verdict"] in ("would likely have avoided it", "might have helped"),
            f"{o['requested_bytes']} B asked, driver free {o['device_free_bytes']} B: "
            f"{o['diagnosis']}; expandable_segments: {hint['verdict']} ({hint['why'][:200]}); "
            f"PyTorch said: {info.get('message', '')[:300]}")

    def oom_expandable():
        info, at_line, _ = oom("caching_oom_expandable",
                               {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})
        row("caching: the same with expandable_segments:True", None,
            f"the 1 GiB tensor {'did not fit either' if info['oom'] else 'fit'}; OOM events at "
            f"its line {len(at_line)}; "
            + (f"diagnosis: {at_line[0]['diagnosis']}" if at_line else "")
            + f"; memory_stats after: {info['after']}")

    for name, fn in (("caching: train", train), ("caching: expandable", expandable),
                     ("caching: planted", planted), ("caching: planted_kept", planted_kept),
                     ("caching: oom", oom_default), ("caching: oom expandable", oom_expandable)):
        guarded(row, name, fn)
