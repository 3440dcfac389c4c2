"""Device buffers on the simulated CUDA's libcudart through ctypes, for the test modules of
the pytest plugin's end-to-end tests (tests/cli/cli_e2e.py)."""

import ctypes

cudart = ctypes.CDLL("libcudart.so.13")  # found through LD_LIBRARY_PATH (the simulator)
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
cudart.cudaFree.argtypes = [ctypes.c_void_p]


def device_buffer(size):
    pointer = ctypes.c_void_p()
    assert cudart.cudaMalloc(ctypes.byref(pointer), size) == 0
    return pointer


def release(pointer):
    assert cudart.cudaFree(pointer) == 0
