"""The test module the pytest plugin's end-to-end test runs (tests/cli/cli_e2e.py,
case pytest_plugin): one test that leaks, one over its memory limit, one clean, on the
simulated CUDA's libcudart through ctypes."""

import ctypes

import pytest

cudart = ctypes.CDLL("libcudart.so.13")  # found through LD_LIBRARY_PATH (the simulator)
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
cudart.cudaFree.argtypes = [ctypes.c_void_p]

KEPT = []  # what test_leaking keeps "for later"


def device_buffer(size):
    pointer = ctypes.c_void_p()
    assert cudart.cudaMalloc(ctypes.byref(pointer), size) == 0
    return pointer


def release(pointer):
    assert cudart.cudaFree(pointer) == 0


@pytest.mark.gpu_no_leaks
def test_leaking():
    KEPT.append(device_buffer(64 << 20))


@pytest.mark.gpu_limit_memory("2 GiB")
def test_over_limit():
    buffer = device_buffer(3 << 30)
    release(buffer)


@pytest.mark.gpu_no_leaks
@pytest.mark.gpu_limit_memory("2 GiB")
def test_clean():
    buffers = [device_buffer(256 << 20) for _ in range(4)]
    for buffer in buffers:
        release(buffer)
