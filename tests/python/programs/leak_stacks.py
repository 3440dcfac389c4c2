"""Leaks one device buffer from the main thread and one from a worker thread, both from
leak_here() called by main(); with an argument N, main() leaks N buffers from its line
(for `diff`). The test finds the lines by their LINE markers."""
import ctypes
import sys
import threading

_cudart = ctypes.CDLL("libcudart.so.13")
KEPT = []


def leak_here(size):
    ptr = ctypes.c_void_p()
    rc = _cudart.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(size))  # LINE:alloc
    if rc != 0:
        sys.exit(f"cudaMalloc failed: {rc}")
    KEPT.append(ptr)


def main(times):
    for _ in range(times):
        leak_here(1234567)  # LINE:main_call
    worker = threading.Thread(target=leak_here, args=(7654321,))
    worker.start()
    worker.join()


main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)  # LINE:module_call
