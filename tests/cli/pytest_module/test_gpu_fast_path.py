"""The test module of the pytest plugin's fast-verdict test (tests/cli/cli_e2e.py, case
pytest_fast_path): tests that record nothing, whose verdicts come from the recorder's count
alone, among tests that allocate, whose verdicts `gpumemtrace check` makes. The tests run
in file order; some depend on the one before (a leak freed by a later test)."""

import ctypes

import pytest

from cuda_buffers import device_buffer, release

recorder = ctypes.CDLL(None)  # the preloaded recorder's public API

KEPT = []  # what a leaking test keeps for a later one to free


def test_empty():
    pass


@pytest.mark.gpu_no_leaks
@pytest.mark.gpu_limit_memory("1 MiB")
def test_empty_marked():
    sum(range(1000))


@pytest.mark.gpu_no_leaks
def test_leak_kept():
    KEPT.append(device_buffer(8 << 20))


def test_frees_earlier_leak():
    release(KEPT.pop())


@pytest.mark.gpu_no_leaks
def test_leak_in_nested_phase():
    recorder.gpumemtrace_push_phase(b"nested")
    KEPT.append(device_buffer(4 << 20))
    recorder.gpumemtrace_pop_phase()


@pytest.mark.gpu_limit_memory("2 MiB")
def test_over_limit():
    release(device_buffer(16 << 20))


@pytest.mark.gpu_no_leaks
@pytest.mark.gpu_limit_memory("64 MiB")
def test_clean_allocating():
    release(device_buffer(32 << 20))


def test_empty_nested_phase():
    recorder.gpumemtrace_push_phase(b"nested nothing")
    recorder.gpumemtrace_pop_phase()


@pytest.mark.gpu_limit_memory("1 MiB")
def test_empty_last():
    pass
