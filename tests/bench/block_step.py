"""The workload of scripts/bench-blocks.sh: training steps of a PyTorch-like program on the
stand-in caching allocator (tests/frameworks/fake_c10_cuda.cpp), so that the recorder's
block events (docs/frameworks.md) come as they do from a launch-bound training step: many
tensors per step, each made by one of several operators through a few dozen native frames
(tests/bench/block_ops.cpp), from Python lines nested in modules the way nn.Module nests
them (instances called through __call__, which the interpreter runs through C, so the native
stack interleaves evaluation frames with the C between them), and each freed where its last
reference goes.

    block_step.py OPS_LIBRARY STEPS [LAYERS=32]

FAKE_TORCH names the stand-in's folder (its lib/libc10_cuda.so), as for the framework tests.
Prints {"steps": ..., "tensors": ...}: the tensors made (each is 3 block events: alloc,
free_requested, free_completed).
"""
import ctypes
import json
import os
import sys

OPS_LIBRARY, STEPS = sys.argv[1], int(sys.argv[2])
LAYERS = int(sys.argv[3]) if len(sys.argv) > 3 else 32

fake = ctypes.CDLL(os.path.join(os.environ["FAKE_TORCH"], "lib", "libc10_cuda.so"))
ops = ctypes.CDLL(OPS_LIBRARY)
ops.block_ops_init.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
ops.block_ops_init(ctypes.cast(fake.fake_torch_malloc, ctypes.c_void_p),
                   ctypes.cast(fake.fake_torch_free, ctypes.c_void_p))
OPS = ops.block_ops_count()
make = ops.block_op
make.restype = ctypes.c_void_p
make.argtypes = [ctypes.c_int, ctypes.c_size_t]
release = ops.block_release
release.argtypes = [ctypes.c_void_p]
KiB = 1024
made = 0


def tensor(op, nbytes):
    global made
    made += 1
    p = make(op, nbytes)
    if not p:
        raise MemoryError("stand-in allocator out of memory")
    return p


class Module:
    """Called as nn.Module is: __call__, then _call_impl, then forward."""

    def __call__(self, *args):
        return self._call_impl(*args)

    def _call_impl(self, *args):
        return self.forward(*args)


class Layer(Module):
    def __init__(self, index):
        self.op = index % OPS
        self.activation = (64 + 32 * (index % 7)) * KiB
        self.weight = (16 + 8 * (index % 5)) * KiB

    def forward(self, saved):
        workspace = tensor((self.op + 1) % OPS, self.activation // 4)
        out = tensor(self.op, self.activation)
        release(workspace)
        saved.append(out)
        return out

    def backward(self, saved, grad_out):
        grad_in = tensor((self.op + 2) % OPS, self.activation)
        grad_weight = tensor((self.op + 3) % OPS, self.weight)
        release(saved.pop())
        if grad_out:
            release(grad_out)
        return grad_in, grad_weight


class Stage(Module):
    def __init__(self, first, count):
        self.layers = [Layer(first + i) for i in range(count)]

    def forward(self, saved):
        for layer in self.layers:
            layer(saved)


class Model(Module):
    def __init__(self, layers):
        per_stage = max(1, layers // 4)
        self.stages = [Stage(i, per_stage) for i in range(0, layers, per_stage)]

    def forward(self, saved):
        for stage in self.stages:
            stage(saved)

    def backward(self, saved):
        grad, grads = None, []
        for stage in reversed(self.stages):
            for layer in reversed(stage.layers):
                grad, grad_weight = layer.backward(saved, grad)
                grads.append((layer, grad_weight))
        release(grad)
        return grads


def optimizer_step(grads):
    for layer, grad_weight in grads:
        update = tensor(layer.op, layer.weight)
        release(update)
        release(grad_weight)


def train_step(model):
    saved = []
    model(saved)
    optimizer_step(model.backward(saved))


def train(steps):
    model = Model(LAYERS)
    for _ in range(steps):
        train_step(model)


def main():
    fake.fake_torch_init()
    train(STEPS)
    print(json.dumps({"steps": STEPS, "tensors": made}))


main()
