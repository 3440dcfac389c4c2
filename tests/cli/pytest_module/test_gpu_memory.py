"""The test module the pytest plugin's end-to-end test runs (tests/cli/cli_e2e.py,
case pytest_plugin): one test that leaks, one over its memory limit, one clean, on the
simulated CUDA's libcudart through ctypes."""

import pytest

from cuda_buffers import device_buffer, release

KEPT = []  # what test_leaking keeps "for later"


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
