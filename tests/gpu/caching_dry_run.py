"""The `caching` group of scripts/gpu_validate.py (scripts/gpu_caching_checks.py) run here,
on the simulated CUDA, so that the script is exercised before it meets a GPU: PyTorch is
replaced by tests/gpu/caching_stand_in (its caching allocator is the stand-in
libc10_cuda.so of tests/frameworks), which the recorder attaches to as to PyTorch's.

    caching_dry_run.py --build BUILD_DIR --fake-c10 LIB --out OUT_DIR

Every judged row must pass. The stand-in has no expandable segments, so the rows of runs with
expandable_segments:True are run but not judged.
"""
import argparse
import os
import shutil
import sys
from pathlib import Path

NOT_JUDGED = ("caching: expandable segments, both peaks",)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--fake-c10", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    here = Path(__file__).resolve()
    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    package = out / "pkg"
    shutil.copytree(here.parent / "caching_stand_in", package)
    (package / "torch" / "lib").mkdir()
    shutil.copy(args.fake_c10, package / "torch" / "lib" / "libc10_cuda.so")
    # Laid out as PyTorch's own: __all__ names '__version__' before the assignment.
    (package / "torch" / "version.py").write_text(
        "__all__ = ['__version__', 'debug']\n__version__ = '2.11.0+stand-in'\ndebug = False\n")
    cudasim = Path(args.build).resolve() / "lib" / "cudasim"
    if not (cudasim / "libcudart.so.13").exists():
        print("SKIP: simulated CUDA not built")
        return 77
    sys.path.insert(0, str(here.parents[2] / "scripts"))
    import gpu_caching_checks
    import gpu_validate as gv
    env = gv.Env(args.build, out)
    for e in (env.app_env, env.cli_env):
        e["LD_LIBRARY_PATH"] = str(cudasim)
    env.app_env["PYTHONPATH"] = str(package)
    env.app_env["PYTHONDONTWRITEBYTECODE"] = "1"
    # 8.5 GiB: an odd count of the oom scenario's 512 MiB blocks, as on an 80 GB card (an
    # even count, as on the H200, hid a scenario that asked for one tensor too many).
    env.app_env["CUDASIM_MEMORY_BYTES"] = str(17 << 29)
    gpu_caching_checks.check_caching(env, gv.row)
    failed = [r for r in gv.ROWS if r[1] == "FAIL" and r[0] not in NOT_JUDGED]
    expected = {"caching: attached to PyTorch's allocator",
                "caching: default-mode training passes check",
                "caching: tensor-level peak = max_memory_allocated()",
                "caching: segment-level peak = max_memory_reserved()",
                "caching: inside-segment fragmentation at the peak = reserved - allocated",
                "caching: the training loop does not grow (check --max-growth 0 passes)",
                "caching: planted list, freed by the interpreter at exit",
                "caching: planted list is growth at the planted line (check --max-growth 0 fails)",
                "caching: planted tensors kept until the end fail check at the planted line",
                "caching: fragmentation OOM diagnosed, hint names expandable_segments",
                "caching: the same with expandable_segments:True"}
    missing = expected - {r[0] for r in gv.ROWS}
    if failed or missing:
        print(f"FAIL: rows failed {failed}, rows missing {sorted(missing)}")
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
