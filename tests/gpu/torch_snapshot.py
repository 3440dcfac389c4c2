"""A PyTorch program that records its own memory history, for the `snapshot` group of
scripts/gpu-validate.sh: `torch.cuda.memory._record_memory_history()` on before the first
tensor, a workload that uses both of the allocator's pools, splits and reuses blocks, frees
a tensor still used by a second stream and gives cached segments back, then PyTorch's own
snapshot written to SNAPSHOT.pickle and the process ended with os._exit, so nothing is
freed after it: the traced run's memory-viz export must hold the same history and the same
segments.

    python3 torch_snapshot.py SNAPSHOT.pickle
"""
import os
import pickle
import sys

import torch


def main():
    torch.cuda.memory._record_memory_history(max_entries=1_000_000)
    dev = torch.device("cuda", 0)
    MiB = 1 << 20
    kept = []
    # Small-pool blocks (at most 1 MiB) split out of 2 MiB segments, some freed again.
    small = [torch.empty(n * 4096, dtype=torch.uint8, device=dev) for n in range(1, 60)]
    del small[::3]
    # Large-pool blocks: 1-10 MiB requests share 20 MiB segments, larger ones get their own.
    for step in range(12):
        a = torch.empty((3 + step % 5) * MiB, dtype=torch.uint8, device=dev)
        b = torch.empty((24 + step) * MiB, dtype=torch.uint8, device=dev)
        c = a.float().sum() + b[:1024].float().sum()
        if step % 4 == 0:
            kept.append(a)
        del a, b, c
    # A block freed while a second stream still uses it: its free completes later.
    side = torch.cuda.Stream(device=dev)
    t = torch.empty(5 * MiB, dtype=torch.uint8, device=dev)
    with torch.cuda.stream(side):
        t.add_(1)
    t.record_stream(side)
    del t
    torch.cuda.synchronize()
    big = torch.empty(64 * MiB, dtype=torch.uint8, device=dev)
    del big
    torch.cuda.empty_cache()  # cached segments given back (segment_free)
    kept.append(torch.ones(7 * MiB, dtype=torch.uint8, device=dev))
    torch.cuda.synchronize()
    snapshot = torch.cuda.memory._snapshot()
    with open(sys.argv[1], "wb") as f:
        pickle.dump(snapshot, f)
    sys.stdout.flush()
    os._exit(0)  # nothing freed after the snapshot, so the trace ends where it does


if __name__ == "__main__":
    main()
