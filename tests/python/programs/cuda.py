"""cudaMalloc and cudaFree through ctypes, as a Python program without a CUDA binding would
call them: ctypes releases the GIL around each foreign call."""
import ctypes
import sys

_cudart = ctypes.CDLL("libcudart.so.13")


def malloc(size):
    ptr = ctypes.c_void_p()
    rc = _cudart.cudaMalloc(ctypes.byref(ptr), ctypes.c_size_t(size))
    if rc != 0:
        sys.exit(f"cudaMalloc({size}) failed: {rc}")
    return ptr


def free(ptr):
    rc = _cudart.cudaFree(ptr)
    if rc != 0:
        sys.exit(f"cudaFree failed: {rc}")
