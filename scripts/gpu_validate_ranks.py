"""The `ranks` group of scripts/gpu-validate.sh: a 2-rank torch.distributed NCCL job
(tests/gpu/torch_ranks.py) on 2 GPUs, traced with one trace per rank named by rank.

Each check is its own row, and a check that breaks (an exception) is a failed row of its
own, not the end of the group: traces named by rank; no false errors from NCCL's VMM use
(retain, import, release); NCCL's own allocations attributed to NCCL (frames of libnccl in
their stacks); the planted leak on rank 1 only; `check` in its default mode passing rank 0,
failing rank 1 on the planted leak only, and passing every rank once that one leak is
suppressed; the per-rank table (JSON and text) with each rank's own device and peak and
rank 1 alone flagged; `record --check` as the one-step gate; and the same job with
PyTorch's caching allocator on (its default), where `check` must still fail rank 1 alone. Needs an nvidia-h200-x2
(2 GPUs); tests/gpu/ranks_dry_run.py runs it on the simulated CUDA.
"""
import json
import re
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
    """The JSON report of one trace, in the default mode (with symbols): the caching
    allocators are recognised by function name (PyTorch's pinned-memory cache keeps the
    few bytes `.item()` staged, and only its symbols say so)."""
    p, _ = env.run(f"{name}.report", [str(env.cli), "report", "--format", "json", "--top",
                                      "1000", str(trace)], env=env.cli_env)
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


def nccl_module(frame):
    """A frame in NCCL's library (libnccl.so.2, or the dry run's stand-in)."""
    return frame.get("module", "").split("/")[-1].startswith("libnccl")


def nccl_allocations(env, trace, name):
    """Of a trace's allocations (`export --format ndjson`: every allocation the report
    counts, with its stack), those with a frame in NCCL's library, and the VMM handles
    created without one."""
    out = env.logs / f"{name}.ndjson"
    p, _ = env.run(f"{name}.export", [str(env.cli), "export", "--format", "ndjson",
                                      "--no-symbols", "-o", str(out), str(trace)],
                   env=env.cli_env)
    if p.returncode != 0:
        raise RuntimeError(f"export of {trace} failed: {p.stderr.strip()[-300:]}")
    modules = {}
    with open(out / "stacks.ndjson") as f:
        for line in f:
            frame = json.loads(line)
            modules.setdefault(frame["stack_id"], []).append(frame)
    nccl, other_vmm = [], []
    with open(out / "allocations.ndjson") as f:
        for line in f:
            a = json.loads(line)
            frames = modules.get(a["stack_id"], [])
            if any(nccl_module(fr) for fr in frames):
                nccl.append(a)
            elif a["kind"] == "vmm":
                other_vmm.append((a, modules_of(frames)))
    return nccl, other_vmm


def rank_table_lines(text):
    """The rows of the text per-rank table: {rank: line}."""
    rows, inside = {}, False
    for line in text.splitlines():
        if line.startswith("Ranks ("):
            inside = True
            continue
        m = re.match(r"^\s+(\d+)\s", line) if inside else None
        if m:
            rows[int(m.group(1))] = line
        elif inside and not line.strip().startswith("rank"):
            inside = False
    return rows


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

    def guarded(name, check):
        """Each check on its own: one that breaks is a failed row, the others still run."""
        try:
            check()
        except Exception as exc:
            row(f"{name} (exception)", False, repr(exc)[:300])

    reports = {}
    for r, t in by_rank.items():
        guarded(f"ranks: report of rank{r}",
                lambda r=r, t=t: reports.__setitem__(r, report(env, t, f"ranks_rank{r}")))
    if sorted(reports) != [0, 1]:
        return
    own_device = {r: infos.get(r, {}).get("device", r) for r in by_rank}
    planted = infos.get(1, {}).get("planted_bytes", 0)

    def header_facts():
        procs = {r: rep["processes"][0] for r, rep in reports.items()}
        row("ranks: rank and host in the report",
            all(procs[r].get("rank") == r for r in procs) and all(procs[r].get("host") for r in procs),
            "; ".join(f"rank{r}: rank={p_.get('rank')} host={p_.get('host')}"
                      for r, p_ in procs.items()))

    def no_false_errors():
        errors = {r: [e["type"] + " " + e["api"] for e in rep["errors"]]
                  for r, rep in reports.items()}
        counts = {r: rep["summary"]["errors"] for r, rep in reports.items()}
        row("ranks: no invalid_free / double_free from NCCL", all(c == 0 for c in counts.values()),
            "; ".join(f"rank{r}: {counts[r]} errors {errors[r][:5]}" for r in sorted(reports)))
        row("ranks: NCCL's VMM calls seen", None,
            "; ".join(f"rank{r}: {vmm_calls(env, by_rank[r])}" for r in sorted(by_rank)))

    def nccl_attributed():
        # NCCL's own memory (its buffers, made through VMM handles) must show NCCL in its
        # stacks; with PyTorch's caching allocator off, nothing else creates VMM handles.
        parts, ok = [], True
        for r in sorted(by_rank):
            nccl, other_vmm = nccl_allocations(env, by_rank[r], f"ranks_rank{r}")
            apis = {}
            for a in nccl:
                apis[a["api"]] = apis.get(a["api"], 0) + 1
            vmm = sum(1 for a in nccl if a["kind"] == "vmm")
            ok = ok and vmm > 0 and not other_vmm
            strays = [a["api"] + " from " + where for a, where in other_vmm[:3]]
            parts.append(f"rank{r}: {len(nccl)} allocations, {sum(a['size'] for a in nccl)} B "
                         f"through libnccl ({apis}); {vmm} of them VMM handles; VMM handles "
                         f"without a libnccl frame: {len(other_vmm)} {strays}")
        row("ranks: NCCL's own allocations attributed to NCCL", ok, "; ".join(parts))

    def planted_leak():
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
            held = reports[r].get("held_at_exit", [])
            row(f"ranks: rank{r} held by caching allocators at exit", None,
                ", ".join(f"{h.get('allocator')}: {h.get('bytes')} B in "
                          f"{h.get('allocations')} allocations" for h in held) or "nothing")

    def check_default():
        # `check` in its default mode: rank 0 passes, rank 1 fails on the leak alone.
        verdict = {}
        for r, t in by_rank.items():
            pc, _ = env.run(f"ranks_check_rank{r}", [str(env.cli), "check", str(t)], env=env.cli_env)
            verdict[r] = pc
        failing = {r: [l.split()[1].rstrip(":") for l in v.stdout.splitlines()
                       if l.startswith("  FAIL ")] for r, v in verdict.items()}
        summary = {r: " | ".join(l.strip() for l in v.stdout.splitlines()
                                 if "FAIL" in l or "ok " in l)[:600] for r, v in verdict.items()}
        row("ranks: check (default) passes rank 0", verdict[0].returncode == 0,
            f"rc={verdict[0].returncode}: {summary[0]}")
        row("ranks: check (default) fails rank 1 on its leak only",
            verdict[1].returncode == 1 and failing[1] == ["leaks"] and
            reports[1]["summary"]["leaked_bytes"] == planted,
            f"rc={verdict[1].returncode}, failing checks {failing[1]}, leaked "
            f"{reports[1]['summary']['leaked_bytes']} B (planted {planted} B): {summary[1]}")

    def check_without_planted():
        # Apart from the planted leak, the job passes: suppress that one leak by its Python
        # function (tests/gpu/torch_ranks.py, plant_leak), and every rank passes.
        supp = env.logs / "ranks_planted.supp"
        supp.write_text("leak:plant_leak\n")
        pc, _ = env.run("ranks_check_suppressed", [str(env.cli), "check",
                                                   "--suppressions", str(supp), str(out_dir)],
                        env=env.cli_env)
        used = [l.strip() for l in pc.stdout.splitlines() if l.strip().startswith("used ")]
        row("ranks: check (default) passes every rank apart from the planted leak",
            pc.returncode == 0 and len(used) == 1 and "leak:plant_leak" in used[0] and
            ": 1 leak site, 1 allocations" in used[0],
            f"rc={pc.returncode}; {used}; " + " | ".join(
                l.strip() for l in pc.stdout.splitlines() if "FAIL" in l)[:400])

    table = {}

    def rank_table_json():
        pr, _ = env.run("ranks_report_dir", [str(env.cli), "report", "--format", "json",
                                             str(out_dir)], env.cli_env)
        for t in json.loads(pr.stdout).get("ranks", []):
            table[t["rank"]] = t
        # Each rank's row: its own device holds its highest peak, and its peak is the one
        # its trace alone gives.
        ok = sorted(table) == [0, 1]
        parts = []
        for r, t in sorted(table.items()):
            peaks = {d["device"]: d["peak_bytes"] for d in t["device_peaks"]}
            own = own_device.get(r)
            alone = reports[r]["processes"][0].get("peak_bytes")
            ok = ok and own in peaks and peaks[own] == max(peaks.values()) > 0 and \
                t["peak_bytes"] == alone and t["peak_bytes"] >= peaks[own]
            parts.append(f"rank{r} (cuda:{own}): host {t['host']} peak {t['peak_bytes']} B "
                         f"(alone {alone} B), per device {peaks}, leaked {t['leaked_bytes']} B, "
                         f"outlier {t['outlier']}")
        row("ranks: report DIR's per-rank table shows each rank's own device and peak", ok,
            "; ".join(parts) or f"rc={pr.returncode} {pr.stderr[:300]}")
        row("ranks: the planted leak flags rank 1 only as an outlier",
            "leaked" in table.get(1, {}).get("outlier", []) and
            "leaked" not in table.get(0, {}).get("outlier", ["leaked"]),
            "; ".join(f"rank{r}: {t['outlier']}" for r, t in sorted(table.items())))

    def rank_table_text():
        pd, _ = env.run("ranks_check_dir", [str(env.cli), "check", str(out_dir)],
                        env.cli_env)
        lines = rank_table_lines(pd.stdout)
        outliers = [l.strip() for l in pd.stdout.splitlines() if l.strip().startswith("outliers:")]
        # "outliers: rank 1 (peak, leaked)"; another rank may stand out in its peak (NCCL's
        # buffers need not be alike), never in what it leaked.
        flagged = {}
        for part in outliers[0][len("outliers:"):].split(";") if len(outliers) == 1 else []:
            m = re.match(r"\s*rank (\d+) \((.*)\)", part)
            if m:
                flagged[int(m.group(1))] = [f.strip() for f in m.group(2).split(",")]
        row("ranks: check DIR's table shows each rank's own device; rank 1 the leak outlier",
            pd.returncode == 1 and sorted(lines) == [0, 1] and
            all(f" {own_device[r]}:" in lines[r] for r in lines) and
            "leaked" in flagged.get(1, []) and "leaked" not in flagged.get(0, []),
            f"rc={pd.returncode}; rows {[lines[r].strip() for r in sorted(lines)]}; {outliers}")

    def record_check_gate():
        gate_dir = env.traces / "ranks_gate"
        if gate_dir.exists():
            for old in gate_dir.rglob("*.gmtrace"):
                old.unlink()
        gate_env = {**env.cli_env, **JOB_ENV,
                    "LD_LIBRARY_PATH": env.app_env["LD_LIBRARY_PATH"] + ":" +
                    env.cli_env.get("LD_LIBRARY_PATH", "")}
        pg, dt = env.run("ranks_record_check",
                         [str(env.cli), "record", "--check", "-o",
                          str(gate_dir / "rank%r.gmtrace"), "--", *torchrun(WORKLOAD)],
                         env=gate_env, timeout=420)
        fails = [l for l in pg.stderr.splitlines() if l.startswith("FAIL pid")]
        row("ranks: record --check exits 1 for rank 1 only",
            pg.returncode == 1 and len(fails) == 1 and "rank1.gmtrace" in fails[0],
            f"rc={pg.returncode} in {dt:.1f}s; failing: {fails}")

    def cached_job():
        # The same job as users run it, with PyTorch's caching allocator on (its default):
        # the cache's segments are held at exit, not leaked, so `check DIR` with no options
        # fails rank 1 on the planted leak alone, and passes once that leak is suppressed.
        cached_dir = env.traces / "ranks_cached"
        if cached_dir.exists():
            for old in cached_dir.rglob("*.gmtrace"):
                old.unlink()
        job_env = env.traced_env("ranks_cached", {
            **{k: v for k, v in JOB_ENV.items() if k != "PYTORCH_NO_CUDA_MEMORY_CACHING"},
            "GPUMEMTRACE_OUTPUT": str(cached_dir / "rank%r.gmtrace")})
        job_env.pop("PYTORCH_NO_CUDA_MEMORY_CACHING", None)
        pj, dt = env.run("ranks_cached_job", torchrun(WORKLOAD), job_env, timeout=420)
        pc, _ = env.run("ranks_cached_check", [str(env.cli), "check", str(cached_dir)],
                        env.cli_env)
        fails = [l for l in pc.stdout.splitlines() if l.startswith("FAIL pid")]
        failing = [l.split()[1].rstrip(":") for l in pc.stdout.splitlines()
                   if l.startswith("  FAIL ")]
        held = [l.strip() for l in pc.stdout.splitlines() if "held by caching" in l]
        row("ranks: with PyTorch's cache on, check DIR fails rank 1 on its leak only",
            pj.returncode == 0 and pc.returncode == 1 and len(fails) == 1 and
            "rank1.gmtrace" in fails[0] and failing == ["leaks"],
            f"job rc={pj.returncode} in {dt:.1f}s; check rc={pc.returncode}; failing {fails} "
            f"{failing}; {held[:2]}")
        supp = env.logs / "ranks_planted.supp"
        supp.write_text("leak:plant_leak\n")
        ps, _ = env.run("ranks_cached_check_suppressed",
                        [str(env.cli), "check", "--suppressions", str(supp), str(cached_dir)],
                        env.cli_env)
        row("ranks: with PyTorch's cache on, check DIR passes apart from the planted leak",
            ps.returncode == 0,
            f"rc={ps.returncode}; " + " | ".join(
                l.strip() for l in ps.stdout.splitlines() if "FAIL" in l or "used " in l)[:400])

    for name, check in (("ranks: header facts", header_facts),
                        ("ranks: errors", no_false_errors),
                        ("ranks: NCCL attribution", nccl_attributed),
                        ("ranks: planted leak", planted_leak),
                        ("ranks: check per rank", check_default),
                        ("ranks: check with the planted leak suppressed", check_without_planted),
                        ("ranks: per-rank table (JSON)", rank_table_json),
                        ("ranks: per-rank table (text)", rank_table_text),
                        ("ranks: record --check", record_check_gate),
                        ("ranks: with PyTorch's cache on", cached_job)):
        guarded(name, check)
