"""A training loop as a Python program without a CUDA binding writes it (ctypes): every
step allocates two activation buffers and frees them, and keep_history(), called from
step(), keeps 16 MiB each step: the leak the HTML report's timeline must show as a band
of its own that grows. With `until-oom` the steps go on until cudaMalloc fails (run it on
a small simulated device: CUDASIM_MEMORY_BYTES). The test finds the lines by their LINE
markers."""
import ctypes
import sys
import time

_cudart = ctypes.CDLL("libcudart.so.13")
MiB = 1 << 20
HISTORY = []


def malloc(size):
    ptr = ctypes.c_void_p()
    rc = _cudart.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(size))  # LINE:malloc
    return ptr if rc == 0 else None


def free(ptr):
    if _cudart.cudaFree(ptr) != 0:
        sys.exit("cudaFree failed")


def keep_history():
    kept = malloc(16 * MiB)  # LINE:leak
    if kept is not None:
        HISTORY.append(kept)
    return kept is not None


def step():
    activations = [malloc(24 * MiB), malloc(8 * MiB)]  # LINE:activations
    kept = keep_history()  # LINE:step_call
    for a in activations:
        if a is not None:
            free(a)
    return kept and all(a is not None for a in activations)


def main(steps, until_oom):
    weights = malloc(64 * MiB)  # LINE:weights
    for _ in range(steps):
        if not step() and until_oom:
            break
        # A step takes a while, as a real one does: the steps, not the interpreter's exit,
        # fill the timeline's width.
        time.sleep(0.02)
    free(weights)


main(int(sys.argv[1]), len(sys.argv) > 2 and sys.argv[2] == "until-oom")
