"""cudaMalloc/cudaFree pairs through ctypes below a chosen number of Python frames, timed
by the program itself (the loop only: no start-up). Prints {"ns_per_pair": ...}.

    python_frames_loop.py FRAMES PAIRS
"""
import ctypes
import json
import sys
import time

FRAMES, PAIRS = int(sys.argv[1]), int(sys.argv[2])
cudart = ctypes.CDLL("libcudart.so.13")


def loop():
    malloc, free = cudart.cudaMalloc, cudart.cudaFree
    ptr = ctypes.c_void_p()
    where, size = ctypes.byref(ptr), ctypes.c_size_t(4096)
    start = time.perf_counter_ns()
    for _ in range(PAIRS):
        malloc(where, size)
        free(ptr)
    return time.perf_counter_ns() - start


def nest(n):
    # <module> and loop() are two frames; nest() makes up the rest.
    return nest(n - 1) if n > 0 else loop()


elapsed = nest(FRAMES - 2)
print(json.dumps({"frames": FRAMES, "pairs": PAIRS, "ns_per_pair": elapsed / PAIRS}))
