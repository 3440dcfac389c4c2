"""The training shapes of the `framework_bench` group (scripts/gpu_framework_bench.py): a
long-lived worker that builds each shape once and times blocks of its steps when the driver
asks, so that interleaved rounds pay no process start-up and no recorder start or exit.

    framework_shapes.py [--history python|all] [--max-entries N] [--mark-phases] [--stand-in]

Commands arrive on stdin, one JSON object a line; each answer is one line on stdout that
starts with REPLY (anything else on stdout, such as a library's warning, is not an answer):

    {"cmd": "warmup", "shape": "mlp", "steps": 20}  -> {"ok": true}
    {"cmd": "time", "shape": "mlp", "steps": 500}   -> {"ms_per_step": ..., "wall_ms_per_step":
                                                         ..., "tensor_events_per_step": ...}
    {"cmd": "exit"}

A block is timed on the GPU with CUDA events after a synchronize, so it covers the steps'
kernels and the gaps the CPU leaves between them (the cost of anything the CPU does per
allocation), and nothing before or after. --history starts PyTorch's own allocation
history before anything is allocated, as a user would, and keeps it on; --mark-phases marks
a phase of the recorder around each timed block (gpumemtrace_mark_phase) so that the events
of the block can be counted in the trace.

--stand-in replaces PyTorch (for the dry run on a machine without it): a step is a few
cudaMalloc/cudaFree pairs through ctypes on the libcudart named by GMT_STANDIN_CUDART (the
simulated CUDA), timed with the wall clock.
"""
import argparse
import ctypes
import inspect
import json
import os
import sys
import time

REPLY = "REPLY "


def reply(obj):
    sys.stdout.write(REPLY + json.dumps(obj) + "\n")
    sys.stdout.flush()


class StandIn:
    """Steps that allocate through the (simulated) CUDA runtime, for the dry run."""

    def __init__(self):
        self.cudart = ctypes.CDLL(os.environ["GMT_STANDIN_CUDART"])
        self.pairs = {"mlp": 40, "conv": 20, "transformer": 10}

    def build(self, shape):
        pairs = self.pairs[shape]
        cudart = self.cudart

        def step():
            ptr = ctypes.c_void_p()
            for i in range(pairs):
                cudart.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(4096 * (i + 1)))
                cudart.cudaFree(ptr)
        return step

    def time_block(self, step, steps):
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        ms = (time.perf_counter() - t0) * 1e3 / steps
        return {"ms_per_step": ms, "wall_ms_per_step": ms, "tensor_events_per_step": None}


class Torch:
    def __init__(self, history, max_entries):
        import torch
        self.torch = torch
        self.dev = torch.device("cuda:0")
        torch.manual_seed(0)
        self.history = start_history(torch, history, max_entries) if history else None

    def build(self, shape):
        return getattr(self, f"build_{shape}")()

    def build_mlp(self):
        # 8 x Linear(512, 512), batch 256, SGD: the loop the costs were first seen on.
        nn = self.torch.nn
        layers = []
        for _ in range(8):
            layers += [nn.Linear(512, 512), nn.ReLU()]
        model = nn.Sequential(*layers).to(self.dev)
        opt = self.torch.optim.SGD(model.parameters(), lr=1e-3)
        return self.trainer(model, opt, lambda: self.torch.randn(256, 512, device=self.dev),
                            lambda out: out.square().mean())

    def build_conv(self):
        # ResNet-18's layout written out (torchvision is not needed), batch 32 of 224 x 224,
        # SGD with momentum.
        nn = self.torch.nn

        class Block(nn.Module):
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.body = nn.Sequential(
                    nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout),
                    nn.ReLU(inplace=True), nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
                    nn.BatchNorm2d(cout))
                self.skip = nn.Sequential() if stride == 1 and cin == cout else nn.Sequential(
                    nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

            def forward(self, x):
                return (self.body(x) + self.skip(x)).relu()

        stages, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            stages += [Block(cin, cout, stride), Block(cout, cout, 1)]
            cin = cout
        model = nn.Sequential(
            nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(inplace=True),
            nn.MaxPool2d(3, 2, 1), *stages, nn.AdaptiveAvgPool2d(1), nn.Flatten(),
            nn.Linear(512, 1000)).to(self.dev)
        opt = self.torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        labels = self.torch.randint(0, 1000, (32,), device=self.dev)
        loss = nn.CrossEntropyLoss()
        return self.trainer(model, opt,
                            lambda: self.torch.randn(32, 3, 224, 224, device=self.dev),
                            lambda out: loss(out, labels))

    def build_transformer(self):
        # One nn.TransformerEncoderLayer, d_model 1024, 16 heads, seq 512, batch 32, AdamW.
        nn = self.torch.nn
        model = nn.TransformerEncoderLayer(1024, 16, 4096, dropout=0.1,
                                           batch_first=True).to(self.dev)
        opt = self.torch.optim.AdamW(model.parameters(), lr=1e-4)
        return self.trainer(model, opt,
                            lambda: self.torch.randn(32, 512, 1024, device=self.dev),
                            lambda out: out.square().mean())

    def trainer(self, model, opt, batch, loss_of):
        model.train()

        def step():
            loss = loss_of(model(batch()))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        return step

    def tensor_events(self):
        s = self.torch.cuda.memory_stats()
        return sum(s.get(k, 0) for k in ("allocation.all.allocated", "allocation.all.freed",
                                         "segment.all.allocated", "segment.all.freed"))

    def time_block(self, step, steps):
        cuda = self.torch.cuda
        start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
        cuda.synchronize()
        before = self.tensor_events()
        t0 = time.perf_counter()
        start.record()
        for _ in range(steps):
            step()
        end.record()
        end.synchronize()
        wall = time.perf_counter() - t0
        return {"ms_per_step": start.elapsed_time(end) / steps,
                "wall_ms_per_step": wall * 1e3 / steps,
                "tensor_events_per_step": (self.tensor_events() - before) / steps}


def start_history(torch, stacks, max_entries):
    """Starts torch.cuda.memory._record_memory_history as PyTorch 2.11 documents it:
    (enabled="all", context="all", stacks="python"|"all", max_entries=N). Assumed: those
    keywords; any this PyTorch lacks is left out (and said in the answer to the driver), so
    that an older or newer signature still runs, with what it has."""
    record = torch.cuda.memory._record_memory_history
    wanted = {"enabled": "all", "context": "all", "stacks": stacks, "max_entries": max_entries}
    try:
        known = inspect.signature(record).parameters
        accepts_any = any(p.kind == p.VAR_KEYWORD for p in known.values())
        used = {k: v for k, v in wanted.items() if k in known or accepts_any}
    except (TypeError, ValueError):  # no signature to read: try them all
        used = dict(wanted)
    record(**used)
    return {"used": used, "left_out": sorted(set(wanted) - set(used)),
            "torch": torch.__version__}


def mark_phase_function():
    mark = getattr(ctypes.CDLL(None), "gpumemtrace_mark_phase", None)
    if mark is not None:
        mark.argtypes = [ctypes.c_char_p]
    return mark


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--history", choices=("python", "all"))
    ap.add_argument("--max-entries", type=int, default=100000)
    ap.add_argument("--mark-phases", action="store_true")
    ap.add_argument("--stand-in", action="store_true")
    args = ap.parse_args()
    backend = StandIn() if args.stand_in else Torch(args.history, args.max_entries)
    mark = mark_phase_function() if args.mark_phases else None
    steps_of = {}
    torch = getattr(backend, "torch", None)
    reply({"ready": True, "pid": os.getpid(), "history": getattr(backend, "history", None),
           "torch": torch.__version__ if torch else None,
           "marks": mark is not None, "stand_in_pairs": getattr(backend, "pairs", None)})
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "exit":
            break
        shape = cmd["shape"]
        if shape not in steps_of:
            steps_of[shape] = backend.build(shape)
        step = steps_of[shape]
        if cmd["cmd"] == "warmup":
            for _ in range(cmd["steps"]):
                step()
            reply({"ok": True})
        else:
            if mark:
                mark(f"framework_bench {shape}".encode())
            got = backend.time_block(step, cmd["steps"])
            if mark:
                mark(b"framework_bench idle")
            reply(got)


if __name__ == "__main__":
    main()
