"""cudaMalloc/cudaFree pairs through ctypes below a chosen number of Python frames (each of
another function), timed by the program itself (the loop only: no start-up). Prints
{"ns_per_pair": ...}.

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


# <module> and loop() are two frames; FRAMES - 2 distinct functions make up the rest, each
# calling the next (distinct code objects, as a real stack has, not one recursing).
source = "".join(f"def f{i}():\n    return f{i + 1}()\n\n" for i in range(FRAMES - 3))
source += f"def f{FRAMES - 3}():\n    return loop()\n"
namespace = {"loop": loop}
exec(compile(source, __file__, "exec"), namespace)
elapsed = namespace["f0"]()
print(json.dumps({"frames": FRAMES, "pairs": PAIRS, "ns_per_pair": elapsed / PAIRS}))
