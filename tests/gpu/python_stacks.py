"""Workloads for the Python-stack checks on a real GPU (scripts/gpu_python_checks.py).

Each allocates from functions whose allocating lines carry a `# LINE:name` marker, keeps
what it allocated and ends with os._exit, so that everything is still allocated at exit and
the report lists it as leaked, with its stack. The last stdout line is JSON: the lines
({"name": number}) and what the framework says about its memory.

    python_stacks.py ctypes|torch_nocache|torch_caching|cupy|jax
"""
import json
import os
import re
import sys
import threading

MiB = 1 << 20
KEPT = []


def lines():
    found = {}
    with open(__file__) as f:
        for number, text in enumerate(f, 1):
            m = re.search(r"# LINE:(\w+)\s*$", text)
            if m:
                found[m.group(1)] = number
    return found


def finish(**info):
    print(json.dumps({"lines": lines(), "tid": threading.get_native_id(), **info}), flush=True)
    os._exit(0)


# ----- the real libcudart through ctypes: the same program as the simulator tests --------

def ctypes_leak(cudart, size):
    import ctypes
    ptr = ctypes.c_void_p()
    rc = cudart.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(size))  # LINE:ctypes_alloc
    assert rc == 0, rc
    KEPT.append(ptr)


def run_ctypes():
    import ctypes
    cudart = ctypes.CDLL("libcudart.so.13")
    ctypes_leak(cudart, 1234567)  # LINE:ctypes_call
    worker = threading.Thread(target=ctypes_leak, args=(cudart, 7654321))
    worker.start()
    worker.join()
    finish()


# ----- PyTorch without its cache: every tensor is a cudaMalloc -----------------------------

def keep_tensor(torch):
    KEPT.append(torch.empty(3 * MiB, dtype=torch.uint8, device="cuda"))  # LINE:keep


def peak_here(torch):
    big = torch.empty(256 * MiB, dtype=torch.uint8, device="cuda")  # LINE:peak
    torch.cuda.synchronize()
    del big


def run_torch_nocache():
    import torch
    torch.zeros(1, device="cuda")  # CUDA context and the first small allocation
    keep_tensor(torch)
    peak_here(torch)
    torch.cuda.synchronize()
    finish(keep_bytes=3 * MiB, peak_bytes=256 * MiB)


# ----- PyTorch's caching allocator: a large tensor gets a segment (cudaMalloc) of its own ---

def segment_a(torch):
    KEPT.append(torch.empty(100 * MiB, dtype=torch.uint8, device="cuda"))  # LINE:segment_a


def segment_b(torch):
    KEPT.append(torch.empty(300 * MiB, dtype=torch.uint8, device="cuda"))  # LINE:segment_b


def run_torch_caching():
    import torch
    segment_a(torch)
    segment_b(torch)
    torch.cuda.synchronize()
    segments = [(s["total_size"], s["address"]) for s in torch.cuda.memory_snapshot()]
    finish(segments=segments, expect={"segment_a": 100 * MiB, "segment_b": 300 * MiB})


# ----- CuPy's memory pool: a new chunk is a cudaMalloc -------------------------------------

def cupy_alloc(cupy):
    KEPT.append(cupy.empty(64 * MiB, dtype=cupy.uint8))  # LINE:cupy_alloc


def run_cupy():
    import cupy
    cupy_alloc(cupy)
    cupy.cuda.Device().synchronize()
    finish(pool_total_bytes=cupy.get_default_memory_pool().total_bytes(), expect_bytes=64 * MiB)


# ----- JAX: XLA decides which thread allocates ------------------------------------------

def jax_alloc(jnp):
    x = jnp.ones((4096, 4096), dtype=jnp.float32)  # LINE:jax_alloc
    x.block_until_ready()
    KEPT.append(x)


def run_jax():
    import jax.numpy as jnp
    jax_alloc(jnp)
    finish(expect_bytes=4096 * 4096 * 4)


if __name__ == "__main__":
    {"ctypes": run_ctypes, "torch_nocache": run_torch_nocache, "torch_caching": run_torch_caching,
     "cupy": run_cupy, "jax": run_jax}[sys.argv[1]]()
