"""A PyTorch inference server that never ends, with a planted slow leak: a cache keyed by
request that is never evicted (scripts/gpu-live.sh watches it with `gpumemtrace top` and
`snapshot`; docs/live.md).

    torch_live_server.py DIR

Writes DIR/pid, then serves requests until DIR/stop appears; every 100 requests it writes
how many it has served to DIR/requests (so a watcher waits for work done, not for time).
"""
import os
import sys

import torch


def main():
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "pid.tmp"), "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(os.path.join(d, "pid.tmp"), os.path.join(d, "pid"))
    model = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.ReLU(),
                                torch.nn.Linear(4096, 4096)).cuda().eval()
    cache = {}

    def serve(request_id, x):
        with torch.no_grad():
            y = model(x)
        cache[request_id] = y[:8].clone()  # LINE:planted 128 KiB per request, never evicted
        return y.sum().item()

    n = 0
    while not os.path.exists(os.path.join(d, "stop")):
        serve("req-%d" % n, torch.randn(64, 4096, device="cuda"))
        n += 1
        if n % 100 == 0:
            with open(os.path.join(d, "requests.tmp"), "w") as f:
                f.write("%d\n" % n)
            os.rename(os.path.join(d, "requests.tmp"), os.path.join(d, "requests"))


if __name__ == "__main__":
    main()
