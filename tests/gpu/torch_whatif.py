"""Workloads for the `whatif` group of scripts/gpu-validate.sh (docs/whatif.md): recorded once
in PyTorch's default mode and replayed by `gpumemtrace whatif` under other allocator
settings, then run for real under those settings to compare the prediction with PyTorch's
own figures.

    torch_whatif.py train    an MLP training loop whose batch changes every step
    torch_whatif.py infer    an inference loop over requests of varying batch and length
    torch_whatif.py frag     fragmentation: 512 MiB tensors, every other one freed, 300 MiB
                             tensors in their places, then 1 GiB

The request order is the same on every run (fixed seeds, no data-dependent sizes), which is
what makes a replay of the recorded requests a prediction of the real run.

Environment: PYTORCH_CUDA_ALLOC_CONF as usual; WHATIF_CAPACITY=BYTES limits PyTorch to that
many bytes with torch.cuda.set_per_process_memory_fraction (PyTorch then refuses any
cudaMalloc that would take its reserved bytes past it, as it would on a smaller card).
The last stdout line is JSON: PyTorch's figures, and whether and where it ran out.
"""
import json
import os
import random
import sys

import torch

MiB = 1 << 20


def train(dev):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
        torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
        torch.nn.Linear(4096, 1024)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(int(os.environ.get("STEPS", "30"))):
        x = torch.randn(256 + (step * 97) % 768, 1024, device=dev)
        loss = model(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        yield step


def infer(dev):
    torch.manual_seed(0)
    rng = random.Random(1)
    layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, batch_first=True).to(dev).eval()
    with torch.no_grad():
        for step in range(int(os.environ.get("STEPS", "60"))):
            batch, length = rng.randint(1, 64), rng.choice((32, 64, 96, 128, 256, 384, 512))
            out = layer(torch.randn(batch, length, 512, device=dev))
            del out
            yield step


def frag(dev):
    big = [torch.empty(512 * MiB, dtype=torch.uint8, device=dev) for _ in range(8)]
    yield 0
    kept = big[0::2]
    del big
    mid = [torch.empty(300 * MiB, dtype=torch.uint8, device=dev) for _ in kept]
    yield 1
    x = torch.empty(1024 * MiB, dtype=torch.uint8, device=dev)
    yield 2
    del x, mid, kept


WORKLOADS = {"train": train, "infer": infer, "frag": frag}


def main():
    name = sys.argv[1]
    dev = torch.device("cuda:0")
    total = torch.cuda.mem_get_info(0)[1]
    info = {"workload": name, "torch": torch.__version__,
            "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""), "total_bytes": total}
    capacity = int(os.environ.get("WHATIF_CAPACITY", "0"))
    if capacity:
        # PyTorch's limit is static_cast<size_t>(fraction * total): half a byte more keeps
        # the float product's rounding from making it capacity - 1.
        fraction = (capacity + 0.5) / total
        torch.cuda.set_per_process_memory_fraction(fraction, 0)
        info["capacity_bytes"] = capacity
        info["allowed_bytes"] = int(fraction * total)
    info["oom"] = False
    steps = 0
    try:
        for steps in WORKLOADS[name](dev):
            pass
        torch.cuda.synchronize()
    except torch.OutOfMemoryError as e:
        info["oom"] = True
        info["oom_step"] = steps
        info["message"] = str(e)[:400]
    stats = torch.cuda.memory_stats(0)
    info["max_memory_allocated"] = torch.cuda.max_memory_allocated(0)
    info["max_memory_reserved"] = torch.cuda.max_memory_reserved(0)
    for key in ("num_device_alloc", "num_device_free", "num_alloc_retries", "num_ooms"):
        info[key] = stats.get(key)
    print(json.dumps(info), flush=True)


if __name__ == "__main__":
    main()
