"""The `ranks` group of scripts/gpu-validate.sh: a 2-rank torch.distributed NCCL job
(tests/gpu/torch_ranks.py) on 2 GPUs, traced with one trace per rank named by rank.

Each check is its own row: traces named by rank, no false errors from NCCL's VMM use
(retain, import, release), `check` in its default mode passing rank 0 and failing rank 1 on
the planted leak only, `record --check` as the one-step gate, and the per-rank peak and
device (INFO). Needs an nvidia-h200-x2 (2 GPUs).
"""
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKLOAD = HERE.parent / "tests/gpu/torch_ranks.py"
# Every tensor is its own cudaMalloc/cudaFree, so what the script frees is freed.
JOB_ENV = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1", "NCCL_NVLS_ENABLE": "0",
           "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}


def torchrun(script):
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nnodes=1",
            "--nproc_per_node=2", str(script)]


def rank_infos(stdout):
    """Each rank's JSON line; the ranks share one stdout, so lines may run together."""
    out = {}
    decoder = json.JSONDecoder()
    start = stdout.find('{"rank"')
    while start >= 0:
        try:
            info, end = decoder.raw_decode(stdout, start)
            out[info["rank"]] = info
        except (ValueError, KeyError):
            end = start + 1
        start = stdout.find('{"rank"', end)
    return out


def modules_of(stack, n=3):
    """The first n distinct libraries of a stack, innermost first, gpumemtrace's left out."""
    out = []
    for f in stack:
        m = f.get("module", "").split("/")[-1]
        if m and not m.startswith("libgpumemtrace") and m not in out:
            out.append(m)
    return " < ".join(out[:n]) or "?"


def report(env, trace, name):
    """The JSON report of one trace, without symbols (module + offset frames are enough
    here, and symbolizing PyTorch's libraries takes long)."""
    p, _ = env.run(f"{name}.report", [str(env.cli), "report", "--format", "json", "--top",
                                      "1000", "--no-symbols", str(trace)], env=env.cli_env)
    if p.returncode != 0:
        raise RuntimeError(f"report of {trace} failed: {p.stderr.strip()[-300:]}")
    (env.logs / f"{name}.report.json").write_text(p.stdout)
    return json.loads(p.stdout)


def gpu_count(env):
    p, _ = env.run("ranks_gpu_count", [sys.executable, "-c",
                                       "import torch; print(torch.cuda.device_count())"])
    try:
        return int(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return 0


def vmm_calls(env, trace):
    """Counts of the VMM calls in a trace, by what they are."""
    counts = {}
    for r in env.dump(trace):
        if r.get("record") != "event" or r.get("kind") != "vmm":
            continue
        key = r["event"] + (" (import)" if r.get("imported") else "")
        counts[key] = counts.get(key, 0) + 1
    return counts


def check_ranks(env, row):
    n = gpu_count(env)
    if n < 2:
        row("ranks: 2 GPUs", False, f"torch.cuda.device_count() = {n}; this group needs 2")
        return
    out_dir = env.traces / "ranks"
    if out_dir.exists():
        for old in out_dir.rglob("*.gmtrace"):
            old.unlink()
    template = str(out_dir / "%h" / "rank%r.gmtrace")
    job_env = env.traced_env("ranks", {**JOB_ENV, "GPUMEMTRACE_OUTPUT": template})
    p, dt = env.run("ranks_job", torchrun(WORKLOAD), job_env, timeout=420)
    infos = rank_infos(p.stdout)
    row("ranks: 2-rank NCCL job ran", p.returncode == 0 and len(infos) == 2 and
        all(i["collectives_ok"] for i in infos.values()),
        f"rc={p.returncode} in {dt:.1f}s; ranks {sorted(infos)}; "
        f"torch {next(iter(infos.values()), {}).get('torch')}, NCCL "
        f"{next(iter(infos.values()), {}).get('nccl')}; stderr tail {p.stderr[-300:]!r}")

    traces = sorted(out_dir.rglob("*.gmtrace"))
    names = sorted(t.name for t in traces)
    by_rank = {int(t.stem[4:]): t for t in traces if t.stem[4:].isdigit()}
    row("ranks: one trace per rank, named by rank", sorted(by_rank) == [0, 1],
        f"{[str(t.relative_to(env.traces)) for t in traces]}"
        f"{'' if names == ['rank0.gmtrace', 'rank1.gmtrace'] else ' (others: not ranks)'}")
    if sorted(by_rank) != [0, 1]:
        return

    reports = {r: report(env, t, f"ranks_rank{r}") for r, t in by_rank.items()}
    # Header facts made it through.
    procs = {r: rep["processes"][0] for r, rep in reports.items()}
    row("ranks: rank and host in the report", all(procs[r].get("rank") == r for r in procs) and
        all(procs[r].get("host") for r in procs),
        "; ".join(f"rank{r}: rank={p_.get('rank')} host={p_.get('host')}"
                  for r, p_ in procs.items()))

    # No false errors from NCCL: no invalid or double free anywhere.
    errors = {r: [e["type"] + " " + e["api"] for e in rep["errors"]] for r, rep in reports.items()}
    counts = {r: rep["summary"]["errors"] for r, rep in reports.items()}
    row("ranks: no invalid_free / double_free from NCCL", all(c == 0 for c in counts.values()),
        "; ".join(f"rank{r}: {counts[r]} errors {errors[r][:5]}" for r in sorted(reports)))
    row("ranks: NCCL's VMM calls seen", None,
        "; ".join(f"rank{r}: {vmm_calls(env, by_rank[r])}" for r in sorted(by_rank)))

    # The planted leak, on rank 1 only.
    planted = infos.get(1, {}).get("planted_bytes", 0)
    def planted_in(rep):
        return [l for l in rep["leaks"] if l["bytes"] == planted and l["allocations"] == 1]
    row("ranks: planted leak found on rank 1 only",
        planted > 0 and bool(planted_in(reports[1])) and not planted_in(reports[0]),
        f"planted {planted} B on rank 1; rank1 has it: {bool(planted_in(reports[1]))}, "
        f"rank0 has it: {bool(planted_in(reports[0]))}")
    for r in sorted(reports):
        leaks = reports[r]["leaks"]
        row(f"ranks: rank{r} leaks by library", None,
            f"{reports[r]['summary']['leaked_bytes']} B in "
            f"{reports[r]['summary']['leaked_allocations']} allocations: " +
            ", ".join(f"{l['bytes']} B {l['kind']}/{l['api']} from {modules_of(l['stack'])}"
                      for l in leaks[:8]))

    # `check` in its default mode: rank 0 passes, rank 1 fails on the leak alone.
    verdict = {}
    for r, t in by_rank.items():
        pc, _ = env.run(f"ranks_check_rank{r}", [str(env.cli), "check", "--no-symbols", str(t)],
                        env=env.cli_env)
        verdict[r] = pc
    leak_fail_only = ("FAIL leaks" in verdict[1].stdout and "FAIL errors" not in
                      verdict[1].stdout and "FAIL peak" not in verdict[1].stdout)
    row("ranks: check (default) passes rank 0", verdict[0].returncode == 0,
        f"rc={verdict[0].returncode}: " + " | ".join(
            l.strip() for l in verdict[0].stdout.splitlines() if "FAIL" in l or "ok " in l)[:600])
    row("ranks: check (default) fails rank 1 on its leak only",
        verdict[1].returncode == 1 and leak_fail_only,
        f"rc={verdict[1].returncode}: " + " | ".join(
            l.strip() for l in verdict[1].stdout.splitlines() if "FAIL" in l or "ok " in l)[:600])

    # Per rank: its device and peak.
    parts = []
    for r, rep in sorted(reports.items()):
        devs = ", ".join(f"device {d['ordinal']} peak {d['peak_bytes']} B"
                         for d in rep["devices"] if d["peak_bytes"])
        parts.append(f"rank{r} (cuda:{infos.get(r, {}).get('device')}): peak "
                     f"{rep['summary']['peak_bytes']} B [{devs}]")
    row("ranks: peak per rank and device", None, "; ".join(parts))

    # The one-step gate over the same job: exit 1, for rank 1's leak.
    gate_dir = env.traces / "ranks_gate"
    if gate_dir.exists():
        for old in gate_dir.rglob("*.gmtrace"):
            old.unlink()
    gate_env = {**env.cli_env, **JOB_ENV, "LD_LIBRARY_PATH": env.app_env["LD_LIBRARY_PATH"] + ":" +
                env.cli_env.get("LD_LIBRARY_PATH", "")}
    pg, dt = env.run("ranks_record_check",
                     [str(env.cli), "record", "--check", "--no-symbols", "-o",
                      str(gate_dir / "rank%r.gmtrace"), "--", *torchrun(WORKLOAD)],
                     env=gate_env, timeout=420)
    fails = [l for l in pg.stderr.splitlines() if l.startswith("FAIL pid")]
    row("ranks: record --check exits 1 for rank 1 only",
        pg.returncode == 1 and len(fails) == 1 and "rank1.gmtrace" in fails[0],
        f"rc={pg.returncode} in {dt:.1f}s; failing: {fails}")
