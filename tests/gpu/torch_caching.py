"""PyTorch in its default caching mode, for the `caching` group of scripts/gpu-validate.sh
(docs/frameworks.md): what gpumemtrace's tensor level must agree with.

    torch_caching.py train          a training loop, then one tensor larger than any before:
                                    the tensor-level peak is that moment, and memory_stats()
                                    is read right then
    torch_caching.py planted        the same, and a list in a module global gains a tensor
                                    every step (the interpreter frees it at exit)
    torch_caching.py planted_kept   the same list; the process ends with os._exit, after
                                    dropping everything else: the kept tensors stay allocated
    torch_caching.py oom            fragmentation: 512 MiB blocks fill the device, every other
                                    one is freed, 300 MiB tensors take the freed blocks (each
                                    split, 212 MiB left in it), then 1 GiB is asked for

The last stdout line is JSON: PyTorch's figures.
"""
import json
import os
import sys

import torch

KEPT = []
MiB = 1 << 20


def stats():
    s = torch.cuda.memory_stats()
    return {k: s.get(k, 0) for k in ("allocated_bytes.all.current", "reserved_bytes.all.current",
                                     "inactive_split_bytes.all.current",
                                     "inactive_split.all.current", "num_ooms")}


def train(planted):
    torch.manual_seed(0)
    dev = torch.device("cuda:0")
    model = torch.nn.Sequential(
        torch.nn.Linear(1000, 3000), torch.nn.ReLU(),
        torch.nn.Linear(3000, 3000), torch.nn.ReLU(),
        torch.nn.Linear(3000, 1000)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(int(os.environ.get("STEPS", "20"))):
        # Odd sizes, changing every step, up and down: a working set that does not grow.
        x = torch.randn(200 + (step * 37) % 64, 1000, device=dev)
        loss = model(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if planted:
            KEPT.append(torch.empty(3 * MiB + 4096 * step, dtype=torch.uint8, device=dev))  # LINE:planted
    torch.cuda.synchronize()
    info = {"max_memory_allocated_before_probe": torch.cuda.max_memory_allocated()}
    # The tensor-level peak, at a moment this script sees: a tensor larger than everything
    # the loop held at once, allocated when nothing else is.
    size = info["max_memory_allocated_before_probe"] + 64 * MiB
    probe = torch.empty(size, dtype=torch.uint8, device=dev)  # LINE:probe
    info["at_peak"] = stats()
    info["max_memory_allocated_at_probe"] = torch.cuda.max_memory_allocated()
    del probe
    return model, opt, info


def oom():
    dev = torch.device("cuda:0")
    big = []
    try:
        while True:
            big.append(torch.empty(512 * MiB, dtype=torch.uint8, device=dev))
    except torch.OutOfMemoryError:
        pass
    kept, holes = big[0::2], len(big[1::2])
    del big
    # One 300 MiB tensor per freed 512 MiB hole, no more: with an odd count of 512 MiB blocks
    # (80 GB cards) one per kept block would need a new segment and fail before the 1 GiB request.
    mid = [torch.empty(300 * MiB, dtype=torch.uint8, device=dev) for _ in range(holes)]
    info = {"blocks_512": len(kept), "before_oom": stats()}
    try:
        x = torch.empty(1024 * MiB, dtype=torch.uint8, device=dev)  # LINE:oom
        info["oom"] = False
        del x
    except torch.OutOfMemoryError as e:
        info["oom"] = True
        info["message"] = str(e)[:600]
    info["after"] = stats()
    return kept, mid, info


def main():
    scenario = sys.argv[1]
    info = {"torch": torch.__version__,
            "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")}
    global MODEL, OPT, LIVE
    if scenario in ("train", "planted", "planted_kept"):
        MODEL, OPT, more = train(scenario != "train")
        info.update(more)
    elif scenario == "oom":
        *LIVE, more = oom()
        info.update(more)
    info["max_memory_allocated"] = torch.cuda.max_memory_allocated()
    info["max_memory_reserved"] = torch.cuda.max_memory_reserved()
    info["end"] = stats()
    info["kept_bytes"] = sum(t.numel() for t in KEPT)
    print(json.dumps(info), flush=True)
    if scenario == "planted_kept":
        del MODEL, OPT
        torch.cuda.synchronize()
        os._exit(0)


if __name__ == "__main__":
    main()
