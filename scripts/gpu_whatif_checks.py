"""The `whatif` group of scripts/gpu-validate.sh: `gpumemtrace whatif`'s predictions against
PyTorch run for real under the settings it predicts (docs/whatif.md), with
tests/gpu/torch_whatif.py:

- each workload (a training loop, a variable-batch inference loop, a fragmentation pattern)
  is recorded once in PyTorch's default mode;
- `whatif` replays it under several settings; replaying the run's own settings must give
  back the recorded segment peak (the model's first check);
- each setting is then run for real, untraced: predicted peak reserved against
  torch.cuda.max_memory_reserved();
- capacities around each setting's predicted smallest capacity are run for real with
  torch.cuda.set_per_process_memory_fraction: predicted fits/runs out against a real
  OutOfMemoryError or none.

Rows: PASS/FAIL where the prediction says it is exact, INFO (with the difference) where it
says it is an estimate. OUT/whatif.md is the table docs/validation.md quotes.
"""
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAM = HERE.parent / "tests" / "gpu" / "torch_whatif.py"
MiB = 1 << 20

SETTINGS = ("", "expandable_segments:True", "max_split_size_mb:128",
            "roundup_power2_divisions:4", "garbage_collection_threshold:0.6",
            "backend:cudaMallocAsync")
# Settings whose smallest capacity is tried for real on each side of its prediction.
BORDER_SETTINGS = ("", "expandable_segments:True", "garbage_collection_threshold:0.6")
WORKLOADS = ("train", "infer", "frag")
MARGIN = 4 * MiB
STEP = 2 * MiB  # whatif's least capacities are in 2 MiB steps


def label(setting):
    return setting or "default"


def real_run(env, name, workload, setting, capacity=0):
    extra = dict(env.app_env)
    if setting:
        extra["PYTORCH_CUDA_ALLOC_CONF"] = setting
    else:
        extra.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    if capacity:
        extra["WHATIF_CAPACITY"] = str(capacity)
    p, _ = env.run(name, [sys.executable, str(PROGRAM), workload], env=extra, timeout=600)
    if p.returncode != 0 or not p.stdout.strip():
        raise RuntimeError(f"{name}: rc={p.returncode}: {p.stderr[-300:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def predict(env, name, trace, capacities):
    cmd = [str(env.cli), "whatif", "--format", "json", str(trace)]
    for s in SETTINGS:
        cmd += ["--setting", label(s)]
    for c in capacities:
        cmd += ["--capacity", str(c)]
    p, _ = env.run(f"{name}.whatif", cmd, env=env.cli_env)
    if p.returncode != 0:
        raise RuntimeError(f"whatif failed (rc={p.returncode}): {p.stderr.strip()[:400]}")
    (env.logs / f"{name}.whatif.json").write_text(p.stdout)
    doc = json.loads(p.stdout)
    if len(doc.get("runs", [])) != 1:
        raise RuntimeError(f"expected one run (process and device): {len(doc.get('runs', []))}")
    run = doc["runs"][0]
    return run, {r["label"]: r for r in run["settings"]}


def fits(row_, capacity):
    for c in row_.get("capacities", []):
        if c["capacity_bytes"] == capacity:
            return c["fits"]
    raise RuntimeError(f"no prediction at {capacity} B for {row_['label']}")


def check_whatif(env, row):
    table = ["| workload | setting | predicted peak reserved | real | difference | exact? |",
             "|---|---|---:|---:|---:|---|"]
    verdicts = ["| workload | setting | capacity | predicted | real |", "|---|---|---:|---|---|"]
    for workload in WORKLOADS:
        name = f"whatif_{workload}"
        p, traces, _ = env.record(name, [sys.executable, str(PROGRAM), workload], timeout=600)
        if p.returncode != 0 or len(traces) != 1:
            row(f"whatif: {workload} recorded", False, f"rc={p.returncode}, {len(traces)} traces:"
                f" {p.stderr[-300:]}")
            continue
        recorded = json.loads(p.stdout.strip().splitlines()[-1])
        try:
            run, first = predict(env, name, traces[0], [])
        except Exception as exc:  # a failed prediction is a failed row, with its reason
            row(f"whatif: {workload} predicted", False, repr(exc)[:300])
            continue
        own = first[label("")]
        row(f"whatif: {workload}, the run's own settings replay to its recorded peaks",
            own["peak_reserved_bytes"] == recorded["max_memory_reserved"] and
            own["peak_allocated_bytes"] == recorded["max_memory_allocated"] and
            run["recorded"].get("replay_matches") is True,
            f"replayed reserved {own['peak_reserved_bytes']} / allocated "
            f"{own['peak_allocated_bytes']} B; PyTorch {recorded['max_memory_reserved']} / "
            f"{recorded['max_memory_allocated']} B; recorded segments "
            f"{run['recorded'].get('peak_reserved_bytes')} B, replay_matches "
            f"{run['recorded'].get('replay_matches')}; {run.get('requests')} requests, "
            f"notes {run.get('notes')}")
        # Capacities on each side of each predicted smallest capacity (4 MiB away, and at
        # it and one 2 MiB step below: the border itself, where expandable segments'
        # rule, checked before their pages are mapped, decides), and for the
        # fragmentation pattern one between the default's and expandable segments'.
        # Each real PyTorch run takes seconds, so each setting is tried only around its own
        # border; the middle one is tried under both settings it separates.
        tries = set()
        for s in BORDER_SETTINGS:
            m = first[label(s)].get("min_capacity_bytes")
            if m:
                tries |= {(s, m + MARGIN), (s, max(m - MARGIN, MARGIN)), (s, m),
                          (s, max(m - STEP, STEP))}
        d, e = (first[label(s)].get("min_capacity_bytes") for s in BORDER_SETTINGS[:2])
        if d and e and e < d:
            tries |= {(BORDER_SETTINGS[0], (d + e) // 2), (BORDER_SETTINGS[1], (d + e) // 2)}
        capacities = sorted({c for _, c in tries})
        _, predicted = predict(env, f"{name}_capacities", traces[0], capacities)
        with ThreadPoolExecutor(4) as pool:
            peaks = {s: pool.submit(real_run, env, f"{name}.{label(s)}", workload, s)
                     for s in SETTINGS}
            runs = {(s, c): pool.submit(real_run, env, f"{name}.{label(s)}.{c}", workload, s, c)
                    for s, c in sorted(tries)}
        for s in SETTINGS:
            pr = predicted[label(s)]
            try:
                real = peaks[s].result()
            except Exception as exc:
                row(f"whatif: {workload} under {label(s)}", False, repr(exc)[:300])
                continue
            diff = pr["peak_reserved_bytes"] - real["max_memory_reserved"]
            table.append(f"| {workload} | {label(s)} | {pr['peak_reserved_bytes']} | "
                         f"{real['max_memory_reserved']} | {diff:+d} | "
                         f"{'exact' if pr['exact'] else 'estimate'} |")
            row(f"whatif: {workload} under {label(s)}, peak reserved",
                (diff == 0) if pr["exact"] else None,
                f"predicted {pr['peak_reserved_bytes']} B ({'exact' if pr['exact'] else 'estimate'}"
                f": {pr.get('why', '')[:120]}), real {real['max_memory_reserved']} B, "
                f"difference {diff:+d} B; cudaMalloc calls predicted {pr.get('cuda_malloc_calls')}"
                f", real {real.get('num_device_alloc')}")
        for (s, c), future in runs.items():
            pr = predicted[label(s)]
            try:
                real = future.result()
                want = fits(pr, c)
            except Exception as exc:
                row(f"whatif: {workload} under {label(s)} at {c} B", False, repr(exc)[:300])
                continue
            verdicts.append(f"| {workload} | {label(s)} | {c} | "
                            f"{'fits' if want else 'runs out'} | "
                            f"{'runs out' if real['oom'] else 'fits'} |")
            row(f"whatif: {workload} under {label(s)} at {c / MiB:.0f} MiB",
                (want == (not real["oom"])) if pr["exact"] else None,
                f"predicted {'fits' if want else 'runs out'}, real "
                f"{'OutOfMemoryError at step ' + str(real.get('oom_step')) if real['oom'] else 'fits'}"
                f" (peak reserved {real['max_memory_reserved']} B"
                f"{', above the limit' if real['max_memory_reserved'] > c else ''})")
    (env.out / "whatif.md").write_text("\n".join(table) + "\n\n" + "\n".join(verdicts) + "\n")
