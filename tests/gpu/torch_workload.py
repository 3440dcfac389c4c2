"""A small model's training steps, for comparing gpumemtrace with PyTorch's own numbers.

The last stdout line is JSON: what PyTorch says about its memory. With --leak, one tensor
is kept alive in a global list and the process ends with os._exit, so that tensor (and
nothing the script meant to free) is still allocated at exit.
"""
import json
import os
import sys
import time

import torch

KEPT = []
LEAK_BYTES = 3 * 1024 * 1024  # a multiple of 512, so no rounding by the allocator


def main():
    leak = "--leak" in sys.argv
    steps = int(os.environ.get("STEPS", "20"))
    torch.manual_seed(0)
    dev = torch.device("cuda:0")
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096), torch.nn.ReLU(),
        torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
        torch.nn.Linear(4096, 1024)).to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    start = time.perf_counter()
    for _ in range(steps):
        x = torch.randn(256, 1024, device=dev)
        loss = model(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    if leak:
        KEPT.append(torch.empty(LEAK_BYTES, dtype=torch.uint8, device=dev))
    info = {
        "max_memory_reserved": torch.cuda.max_memory_reserved(),
        "max_memory_allocated": torch.cuda.max_memory_allocated(),
        "memory_reserved": torch.cuda.memory_reserved(),
        "leak_bytes": LEAK_BYTES if leak else 0,
        "elapsed_s": elapsed,
        "torch": torch.__version__,
    }
    print(json.dumps(info), flush=True)
    if leak:
        del model, opt, x, loss
        torch.cuda.synchronize()
        os._exit(0)


if __name__ == "__main__":
    main()
