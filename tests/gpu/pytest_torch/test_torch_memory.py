"""PyTorch tests under `pytest --gpumemtrace` on a real GPU (scripts/gpu-pytest.sh): tests that
allocate tensors and free them pass, one that keeps a tensor in a module-level list fails
on its leak, one over its limit fails on its peak. The plugin's summary says which verdicts
came from the recorder and which from `gpumemtrace check`: the tests after the first matmul
that free their tensors (the segments PyTorch keeps cached are no leak) from the recorder's
accounting of the block events; the first matmul's (cuBLAS's handle and workspace stay
allocated, which check's built-in suppressions judge), the leak's and the limit's from
check."""

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


def test_matmul_again():
    a = torch.randn(1024, 1024, device="cuda")
    b = a @ a
    torch.cuda.synchronize()
    del a, b


@pytest.mark.gpu_no_leaks
@pytest.mark.gpu_limit_memory("256 MiB")
def test_tensors_freed_new_segment():
    x = torch.ones(48 << 20, dtype=torch.uint8, device="cuda")
    y = x * 2
    torch.cuda.synchronize()
    del x, y


@pytest.mark.gpu_no_leaks
def test_keeps_a_tensor():
    KEPT.append(torch.empty(16 << 20, dtype=torch.uint8, device="cuda"))


@pytest.mark.gpu_limit_memory("64 MiB")
def test_over_limit():
    x = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    del x
