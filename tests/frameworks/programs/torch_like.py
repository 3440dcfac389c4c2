"""A PyTorch-like program on the stand-in libc10_cuda.so (tests/frameworks/fake_c10_cuda.cpp):
tensors made and dropped from Python through its caching allocator, reached through the
stand-in's installed package (site-packages/torch_stand_in.py). A tensor frees its block when
the last reference goes, as a torch.Tensor does, and so at interpreter exit for what module
globals still hold.

    torch_like.py SCENARIO RESULT.json

Scenarios: train, planted (a list keeps a tensor every step, until exit), planted_kept (the
same, but the process ends with os._exit: nothing is freed), record_stream, oom. RESULT gets
the allocator's statistics (PyTorch's memory_stats names) at the end and at the moment the
allocated bytes first reached their maximum.
"""
import json
import os
import sys

# The stand-in's Python side is an installed package, as PyTorch's is.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))
from torch_stand_in import MiB, Tensor, lib, stats  # noqa: E402


AT_PEAK = {}


def watch():
    """Keeps the statistics of the moment allocated first reached its maximum."""
    s = stats()
    if s["allocated"] > AT_PEAK.get("allocated", 0):
        AT_PEAK.clear()
        AT_PEAK.update(s)


def step_tensors(step):
    acts = []
    for n in (1_500_000 + step * 1000, 800_000, 6_000_001, 333_333, 25_000_000 - step * 4096):
        acts.append(Tensor(n))
        watch()
    grads = [Tensor(3_000_001), Tensor(700_001), Tensor(1000)]
    watch()
    return acts, grads


def train(steps, planted):
    model = [Tensor(n) for n in (3_000_001, 5 * MiB, 700_001, 12_345_678, 4096, 65_536)]
    watch()
    kept = []
    for step in range(steps):
        acts, grads = step_tensors(step)
        if planted:
            kept.append(Tensor(2_000_000 + step * 512))  # LINE:planted
        del acts, grads
    return model, kept


def oom():
    """Fragmentation: 20 MiB segments each hold a long-lived 9 MiB block and had a
    short-lived 9 MiB one; with those freed, 11 MiB lie free in each, yet a 40 MiB tensor
    needs a segment of its own, for which the device has no room."""
    long_lived, short_lived = [], []
    try:
        while True:
            long_lived.append(Tensor(9 * MiB))
            short_lived.append(Tensor(9 * MiB))
    except MemoryError:
        pass
    del short_lived
    before = stats()
    try:
        Tensor(40 * MiB)  # LINE:oom
        raise SystemExit("the 40 MiB tensor should not fit")
    except MemoryError:
        pass
    return long_lived, before


def main():
    scenario, out = sys.argv[1], sys.argv[2]
    lib.fake_torch_init()
    result = {}
    global MODEL, KEPT, LIVE
    if scenario in ("train", "planted", "planted_kept"):
        MODEL, KEPT = train(6, scenario != "train")
        if scenario == "planted_kept":
            del MODEL
    elif scenario == "record_stream":
        t = Tensor(5 * MiB)
        t.record_stream(0x5a5a)
        watch()
        del t  # requested now, completed at the next allocation
        LIVE = Tensor(1 * MiB)
        watch()
    elif scenario == "oom":
        LIVE, result["before_oom"] = oom()
    result["end"] = stats()
    result["at_peak"] = AT_PEAK
    with open(out, "w") as f:
        json.dump(result, f)
    if scenario == "planted_kept":
        sys.stdout.flush()
        os._exit(0)  # no interpreter finalization: the kept tensors are never freed


main()
