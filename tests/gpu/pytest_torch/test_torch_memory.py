"""PyTorch tests under `pytest --gpumemtrace` on a real GPU (scripts/gpu-pytest.sh): tests that
allocate tensors and free them pass, one that keeps a tensor in a module-level list fails
on its leak, one over its limit fails on its peak. The plugin's summary says which verdicts
came from the recorder and which from `gpumemtrace check`."""

import pytest
import torch

KEPT = []


def test_empty():
    pass


def test_matmul_freed():
    a = torch.randn(1024, 1024, device="cuda")
    b = a @ a
    torch.cuda.synchronize()
    del a, b


@pytest.mark.gpu_no_leaks
def test_keeps_a_tensor():
    KEPT.append(torch.empty(16 << 20, dtype=torch.uint8, device="cuda"))


@pytest.mark.gpu_limit_memory("64 MiB")
def test_over_limit():
    x = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    del x
