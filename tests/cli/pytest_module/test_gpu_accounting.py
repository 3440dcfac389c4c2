"""The test module of the pytest plugin's accounting test (tests/cli/cli_e2e.py, case
pytest_accounting): tests that allocate and free, whose verdicts come from the recorder's
accounting of their phase, among tests whose figures it cannot settle (a leak, a peak over
its limit, memory freed that an earlier test allocated, a site whose live bytes grow), which
`gpumemtrace check` judges. The tests run in file order; some depend on the one before."""

import ctypes
import threading

import pytest

from cuda_buffers import device_buffer, release

recorder = ctypes.CDLL(None)  # the preloaded recorder's public API

KEPT = []  # what a leaking test keeps for a later one to free


@pytest.mark.gpu_no_leaks
def test_alloc_free():
    release(device_buffer(1 << 20))


@pytest.mark.gpu_no_leaks
@pytest.mark.gpu_limit_memory("64 MiB")
def test_alloc_free_limited():
    first = device_buffer(8 << 20)
    second = device_buffer(16 << 20)
    release(first)
    release(second)
    for _ in range(5):
        release(device_buffer(4 << 20))


@pytest.mark.gpu_no_leaks
@pytest.mark.gpu_limit_memory("64 MiB")
def test_thread_allocates():
    """A buffer of another thread, allocated and freed while the test runs: the test's."""
    def work():
        release(device_buffer(48 << 20))
    thread = threading.Thread(target=work)
    thread.start()
    thread.join()


@pytest.mark.gpu_no_leaks
def test_thread_leaks():
    thread = threading.Thread(target=lambda: KEPT.append(device_buffer(2 << 20)))
    thread.start()
    thread.join()


def test_frees_earlier():
    release(KEPT.pop())


@pytest.fixture
def earlier_buffer():
    """Allocated in the test's setup, before its phase."""
    return device_buffer(4 << 20)


@pytest.mark.gpu_limit_memory("64 MiB")
def test_frees_earlier_limited(earlier_buffer):
    """Memory allocated before the test is freed in it: the device memory never rises above
    its level at the push (check's +0 B), which the recorder's count alone cannot tell."""
    release(earlier_buffer)
    release(device_buffer(2 << 20))


@pytest.mark.gpu_limit_memory("4 MiB")
def test_over_limit():
    release(device_buffer(16 << 20))


@pytest.mark.gpu_no_leaks
def test_grows_in_steps():
    """Live bytes that grow step after step, all freed at the end: check finds the growth."""
    buffers = []
    for _ in range(6):
        recorder.gpumemtrace_push_phase(b"step")
        buffers.append(device_buffer(1 << 20))
        recorder.gpumemtrace_pop_phase()
    for buffer in buffers:
        release(buffer)


@pytest.mark.gpu_no_leaks
def test_leaks():
    KEPT.append(device_buffer(8 << 20))


def test_nested_phase_frees():
    recorder.gpumemtrace_push_phase(b"nested")
    buffer = device_buffer(2 << 20)
    recorder.gpumemtrace_pop_phase()
    release(buffer)
