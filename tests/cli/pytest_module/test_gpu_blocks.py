"""The test module of the pytest plugin's accounting test for PyTorch-style tests
(tests/cli/cli_e2e.py, case pytest_accounting_blocks): tensors made and dropped through the
stand-in PyTorch caching allocator (tests/frameworks/fake_c10_cuda.cpp, reached with ctypes
as tests/frameworks/programs/site-packages/torch_stand_in.py does). Tests whose tensors are
all freed, the segments kept in the allocator's cache, get their verdicts from the
recorder's accounting of the block events; a leaked tensor, a peak over its limit and a
tensor site that grows are judged by `gpumemtrace check`. The tests run in file order; some
depend on the one before."""

import ctypes

import pytest

from torch_stand_in import MiB, Tensor, lib

lib.fake_torch_init()  # CUDA's lazy init, before any test

recorder = ctypes.CDLL(None)  # the preloaded recorder's public API

KEPT = []  # what a leaking test keeps for a later one to free


@pytest.mark.gpu_no_leaks
def test_tensors_freed_segments_cached():
    """The allocator's first segments are taken here and stay cached: not a leak."""
    a = Tensor(1000)
    b = Tensor(3 * MiB + 1)
    c = Tensor(700_001)
    del a, b, c


@pytest.mark.gpu_no_leaks
@pytest.mark.gpu_limit_memory("64 MiB")
def test_new_segment_limited():
    """A tensor larger than the cached segments: a new segment, the peak increase it adds."""
    big = Tensor(30 * MiB + 12345)
    small = Tensor(4096)
    del big, small


@pytest.mark.gpu_limit_memory("64 MiB")
def test_cached_segments_reused():
    """Tensors in the segments cached before, each freed at once (nothing refers to it):
    the device memory does not rise."""
    Tensor(1 * MiB)
    Tensor(2 * MiB)
    Tensor(500)
    Tensor(30 * MiB)


@pytest.mark.gpu_no_leaks
def test_tensor_leak():
    KEPT.append(Tensor(1 * MiB))


def test_frees_earlier_tensor():
    """A tensor of an earlier test freed here: no leak of this one."""
    KEPT.pop()
    t = Tensor(2048)
    del t


def test_no_allocations():
    pass


@pytest.mark.gpu_limit_memory("8 MiB")
def test_over_limit():
    t = Tensor(40 * MiB)
    del t


@pytest.mark.gpu_no_leaks
def test_tensor_site_grows():
    """Tensors kept step after step, all freed at the end: check finds the growth."""
    kept = []
    for _ in range(6):
        recorder.gpumemtrace_push_phase(b"step")
        kept.append(Tensor(256 * 1024))
        recorder.gpumemtrace_pop_phase()
    del kept


def test_record_stream():
    """A tensor used on another stream: freed now, its memory free when that stream's work
    is done (the allocator's next allocation here); both in the test."""
    t = Tensor(5 * MiB)
    t.record_stream(0x5a5a)
    del t
    u = Tensor(1 * MiB)
    del u
