"""A PyTorch inference server in miniature, for the `live` group of scripts/gpu-validate.sh
(docs/live.md): it answers REQUESTS requests with a small model and keeps a slow planted
leak, a cache dict keyed by request that keeps every tenth answer on the GPU.

    torch_server.py REQUESTS [PACE_SECONDS]

PACE_SECONDS (default 0) is slept between requests so that a watcher can see the process
while it runs; the allocations do not depend on it, so two runs with the same REQUESTS make
the same requests in the same order (what lets a full and an aggregated trace be compared).
Under the recorder each request is a phase ("request", gpumemtrace_mark_phase in
gpumemtrace.h), so growth is measured per request.
The last stdout line is JSON: PyTorch's figures and the bytes the cache kept.
"""
import ctypes
import json
import sys
import time

import torch

CACHE = {}


def main():
    requests = int(sys.argv[1])
    pace = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
    torch.manual_seed(0)
    dev = torch.device("cuda:0")
    model = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(),
                                torch.nn.Linear(1024, 256)).to(dev).eval()
    try:  # the recorder's own functions, when it is preloaded
        mark = ctypes.CDLL(None).gpumemtrace_mark_phase
        mark.argtypes = [ctypes.c_char_p]
    except AttributeError:
        mark = None
    with torch.no_grad():
        for request in range(requests):
            if mark:
                mark(b"request")
            x = torch.randn(8 + request % 24, 256, device=dev)
            answer = model(x)
            if request % 10 == 0:
                CACHE[f"request-{request}"] = answer  # LINE:leak
            if pace:
                torch.cuda.synchronize()
                time.sleep(pace)
    torch.cuda.synchronize()
    print(json.dumps({"requests": requests,
                      "kept_bytes": sum(t.numel() * t.element_size() for t in CACHE.values()),
                      "kept_tensors": len(CACHE),
                      "max_memory_allocated": torch.cuda.max_memory_allocated(),
                      "max_memory_reserved": torch.cuda.max_memory_reserved()}), flush=True)


if __name__ == "__main__":
    main()
