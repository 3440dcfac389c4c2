"""The `ranks` group of scripts/gpu_validate.py run here, on the simulated CUDA, so that the
2-GPU script is exercised before it meets a GPU: torchrun and the PyTorch job are replaced by
stand-ins (this file, in the roles below) that allocate, free and plant rank 1's leak the
way tests/gpu/torch_ranks.py does (in a function of the same name, plant_leak), with ctypes
on the simulated runtime, and make NCCL's own allocations through libnccl_standin.so
(tests/gpu/nccl_standin.cpp), as NCCL does through libnccl.

    ranks_dry_run.py --build BUILD_DIR --out OUT_DIR --nccl-standin LIB
                                                          every row of the group must pass
    ranks_dry_run.py launch SCRIPT                        (stand-in for torchrun, 2 ranks)
    ranks_dry_run.py rank                                 (stand-in for the job, one rank)
"""
import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

PLANTED_BYTES = 7 * 1024 * 1024 + 12288


def launch(script):
    procs = [subprocess.Popen([sys.executable, script, "rank"],
                              env=dict(os.environ, RANK=str(r), LOCAL_RANK=str(r),
                                       WORLD_SIZE="2")) for r in range(2)]
    return max(p.wait() for p in procs)


def plant_leak(rt):
    q = ctypes.c_void_p()
    if rt.cudaMalloc(ctypes.byref(q), ctypes.c_size_t(PLANTED_BYTES)) != 0:
        raise SystemExit(1)
    return q.value  # never freed


def rank():
    r = int(os.environ["RANK"])
    rt = ctypes.CDLL("libcudart.so.13")
    p = ctypes.c_void_p()
    if rt.cudaSetDevice(r) != 0 or rt.cudaMalloc(ctypes.byref(p), ctypes.c_size_t(1 << 20)):
        return 1
    # NCCL's buffers: made and freed through its library, on this rank's device.
    nccl = ctypes.CDLL(os.environ["GMT_NCCL_STANDIN"])
    if nccl.nccl_standin_buffer(ctypes.c_size_t(4 << 20)) != 0:
        return 1
    rt.cudaFree(p)
    planted = PLANTED_BYTES if r == 1 and plant_leak(rt) else 0
    print(json.dumps({"rank": r, "local_rank": r, "device": r, "world_size": 2,
                      "collectives_ok": True, "planted_bytes": planted, "torch": "stand-in",
                      "nccl": "stand-in"}), flush=True)
    return 0


def dry_run(build, out, nccl_standin):
    here = Path(__file__).resolve()
    sys.path.insert(0, str(here.parents[2] / "scripts"))
    import gpu_validate as gv
    import gpu_validate_ranks as gr
    gr.WORKLOAD = here
    gr.torchrun = lambda script: [sys.executable, str(here), "launch", str(script)]
    cudasim = str(Path(build).resolve() / "lib" / "cudasim")
    os.environ.update(gr.JOB_ENV)
    os.environ["CUDASIM_DEVICES"] = "2"
    os.environ["GMT_NCCL_STANDIN"] = str(Path(nccl_standin).resolve())
    env = gv.Env(build, out)
    env.app_env["LD_LIBRARY_PATH"] = cudasim
    env.cli_env["LD_LIBRARY_PATH"] = cudasim
    real_gpu_count = gr.gpu_count
    gr.gpu_count = lambda e: 2  # torch is not here to count them
    gr.check_ranks(env, gv.row)
    gr.gpu_count = real_gpu_count
    failed = [r for r in gv.ROWS if r[1] == "FAIL"]
    passed = [r for r in gv.ROWS if r[1] == "PASS"]
    print(f"{len(passed)} passed, {len(failed)} failed")
    return 1 if failed or len(passed) < 15 else 0  # every PASS/FAIL row of the group


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "launch":
        sys.exit(launch(sys.argv[2]))
    if len(sys.argv) > 1 and sys.argv[1] == "rank":
        sys.exit(rank())
    import argparse
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--nccl-standin", required=True)
    a = ap.parse_args()
    sys.exit(dry_run(a.build, a.out, a.nccl_standin))
