"""GPU memory verdicts per test, for pytest runs recorded by gpumemtrace.

    gpumemtrace record -- python -m pytest --gpumemtrace tests/

Installed with the wheel (gpumemtrace.pytest_plugin, registered through the ``pytest11``
entry point) or put on PYTHONPATH by ``gpumemtrace record`` from a CMake install or build
tree (as gpumemtrace_pytest); it imports nothing from its package, so either name works.

With ``--gpumemtrace`` every test's call is a phase of the trace (pushed before the test
function runs, popped after it returns), and right after it the plugin has the trace so far
analysed for that phase (``gpumemtrace check --phase TEST --format json``):

* leaks: GPU memory the test allocated and still held when it returned;
* growth: allocation sites whose live bytes grow across the iterations the test runs
  (phases it marks, NVTX ranges, or its allocation pattern; docs/analysis.md);
* the peak increase: how far the device memory rose above its level when the test began.

Most tests get their verdict without reading the trace, from what the recorder counted
in-process, when its figures are what ``check`` would say:

* a test that recorded nothing: the recorder counts what the trace holds between the push
  of the test's phase and its pop (``gpumemtrace_last_popped_phase``), and a phase with no
  record in it has no allocation, so no leak, no growth and no peak increase
  (``_Verdict.of_empty_phase``);
* a test that freed every device allocation it made, and every tensor (PyTorch's caching
  allocator's blocks; the segments it keeps cached are no leak, as check says): the
  recorder accounts each test's phase (``gpumemtrace_account_phases``,
  ``gpumemtrace_last_phase_account``): what the phase allocated and freed, the peak
  increase, and whether anything it did is beyond its counting (``_Verdict.of_account``).

Every other test (anything left allocated, events the accounting does not follow, events
dropped, a test id pushed before) is checked as above, and so is a test over its limit,
for the stacks of what held its peak (docs/ci.md, "What a verdict costs").

Every test gets a verdict (the terminal summary lists them; the figures are JUnit
properties of the test case with ``--junitxml``). A test *fails* on them when marked:

* ``@pytest.mark.gpu_limit_memory("2 GiB")``: its peak increase is over the size;
* ``@pytest.mark.gpu_no_leaks``: it leaked, or memory it allocated grows across its
  iterations.

``--gpumemtrace-no-leaks`` treats every test as marked ``gpu_no_leaks``;
``--gpumemtrace-max-growth SIZE`` fails any test whose growth per iteration is over SIZE.
The failure shows the verdict with the allocation stacks.

The plugin talks to the recorder through its public C API (include/gpumemtrace.h), which
libgpumemtrace.so exports when it is preloaded. Run without the recorder, it says so once
and checks nothing (``--gpumemtrace-require`` makes that an error instead).
"""

import ctypes
import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest

_SIZE_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "KIB": 1 << 10, "M": 1 << 20,
               "MB": 1 << 20, "MIB": 1 << 20, "G": 1 << 30, "GB": 1 << 30, "GIB": 1 << 30,
               "T": 1 << 40, "TB": 1 << 40, "TIB": 1 << 40}


def parse_size(text):
    """'2 GiB', '512M', '1048576' -> bytes (binary units, as the gpumemtrace CLI reads them)."""
    value = str(text).strip().replace("_", "")
    number = value.rstrip("BbKkMmGgTtIi ")
    unit = value[len(number):].strip().upper()
    if not number or unit not in _SIZE_UNITS:
        raise ValueError("not a size: %r (use e.g. '2 GiB', '512M')" % (text,))
    return int(float(number) * _SIZE_UNITS[unit])


def _format_bytes(n):
    """'512 B', '12.0 KiB': the CLI's text for a size (analyzer/base/human_bytes.cpp with
    one decimal, as `check` writes it), so a figure reads the same whoever made it."""
    if n == (1 << 64) - 1:
        return "at least 16 EiB (saturated)"
    if n < 1024:
        return "%d B" % n
    value, unit = float(n), 0
    while value >= 1024 and unit < 5:
        value /= 1024
        unit += 1
    return "%.1f %s" % (value, ("B", "KiB", "MiB", "GiB", "TiB", "PiB")[unit])


class _PoppedPhase(ctypes.Structure):
    """struct gpumemtrace_popped_phase (include/gpumemtrace.h)."""
    _fields_ = [("slots", ctypes.c_ulonglong), ("dropped", ctypes.c_ulonglong)]


class _PhaseAccount(ctypes.Structure):
    """struct gpumemtrace_phase_account (include/gpumemtrace.h)."""
    _fields_ = [("unsettled", ctypes.c_ulonglong), ("allocations", ctypes.c_ulonglong),
                ("frees", ctypes.c_ulonglong), ("live_allocations", ctypes.c_ulonglong),
                ("live_bytes", ctypes.c_ulonglong), ("peak_increase_bytes", ctypes.c_ulonglong),
                ("block_allocations", ctypes.c_ulonglong), ("block_frees", ctypes.c_ulonglong),
                ("live_blocks", ctypes.c_ulonglong), ("live_block_bytes", ctypes.c_ulonglong),
                ("cached_allocations", ctypes.c_ulonglong), ("cached_bytes", ctypes.c_ulonglong)]


# GPUMEMTRACE_ACCOUNT_FREED_BEFORE: the peak increase may be above check's; the rest stands.
_ACCOUNT_FREED_BEFORE = 0x2
# GPUMEMTRACE_ACCOUNT_BLOCKS: the tensor level is in the fields from block_allocations on,
# which this plugin reads.
_ACCOUNT_BLOCKS = 0x80


class _Recorder:
    """libgpumemtrace.so's public API, when this process runs under the recorder."""

    def __init__(self):
        self.path = None
        lib = ctypes.CDLL(None)  # the process's global symbols: LD_PRELOAD's among them
        try:
            self.push = lib.gpumemtrace_push_phase
            self.pop = lib.gpumemtrace_pop_phase
            self.flush = lib.gpumemtrace_flush
            trace_file = lib.gpumemtrace_trace_file
            active = lib.gpumemtrace_active
        except AttributeError:
            self.available = False
            return
        # Newer than the rest of the API: a recorder without it gives no fast verdicts.
        self.last_popped = getattr(lib, "gpumemtrace_last_popped_phase", None)
        if self.last_popped is not None:
            self.last_popped.argtypes = [ctypes.POINTER(_PoppedPhase), ctypes.c_ulong]
            self.last_popped.restype = ctypes.c_int
        # Newer still: without it, tests that allocate are all checked.
        self.last_account = getattr(lib, "gpumemtrace_last_phase_account", None)
        self.account_phases = getattr(lib, "gpumemtrace_account_phases", None)
        if self.last_account is not None and self.account_phases is not None:
            self.last_account.argtypes = [ctypes.POINTER(_PhaseAccount), ctypes.c_ulong]
            self.last_account.restype = ctypes.c_int
            self.account_phases.restype = ctypes.c_int
        else:
            self.last_account = None
        self.push.argtypes = [ctypes.c_char_p]
        self.push.restype = None
        self.pop.argtypes = []
        self.pop.restype = None
        self.flush.restype = ctypes.c_int
        trace_file.restype = ctypes.c_char_p
        active.restype = ctypes.c_int
        self.available = active() == 1
        if self.available:
            path = trace_file()
            self.path = path.decode() if path else None
            self.available = self.path is not None

    def popped_phase_was_empty(self):
        """True when the trace holds no record between this thread's last push and the pop
        right after it, and no event was dropped meanwhile; False when it does, or when the
        recorder cannot tell."""
        if self.last_popped is None:
            return False
        phase = _PoppedPhase()
        if self.last_popped(ctypes.byref(phase), ctypes.sizeof(phase)) != 0:
            return False
        return phase.slots == 0 and phase.dropped == 0

    def start_accounting(self):
        """Has the recorder account the phases this thread pushes (the tests')."""
        if self.last_account is not None and self.account_phases() != 0:
            self.last_account = None

    def phase_account(self):
        """The recorder's figures of the test's phase just popped, or None."""
        if self.last_account is None:
            return None
        account = _PhaseAccount()
        if self.last_account(ctypes.byref(account), ctypes.sizeof(account)) != 0:
            return None
        return account


def _preload_library():
    """The path of the libgpumemtrace.so mapped into this process, or None."""
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split(None, 5)[-1].strip()
                if os.path.basename(path).startswith("libgpumemtrace.so"):
                    return path
    except OSError:
        pass
    return None


# Where the wheel bundles the CLI (its own prefix: bin/gpumemtrace, lib/libgpumemtrace.so).
_BUNDLED_CLI = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_prefix", "bin",
                            "gpumemtrace")


def _find_cli(configured):
    """--gpumemtrace-cli, $GPUMEMTRACE_CLI, bin/gpumemtrace next to the preloaded
    library's lib/, the one the wheel bundles, or gpumemtrace on PATH."""
    candidates = [configured, os.environ.get("GPUMEMTRACE_CLI")]
    library = _preload_library()
    if library:
        candidates.append(os.path.join(os.path.dirname(library), os.pardir, "bin",
                                       "gpumemtrace"))
    candidates += [_BUNDLED_CLI, shutil.which("gpumemtrace")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    return None


# Phase names this process pushed (in every pytest session it ran: pytest.main() may run
# twice): check judges every occurrence of a name together, so only a name's first push is
# judged from the recorder's count alone.
_PUSHED = set()


class _Verdict:
    """One test's figures and failed checks, as `gpumemtrace check --format json` gives them.

    failed: (name, summary, findings) of each failed check other than "errors", findings as
    check's JSON has them (bytes, and the stack as text lines, own code first);
    increase_text: the peak increase as check writes it ("1.0 GiB"), None without a limit.
    """

    def __init__(self, leaked, growth, increase, increase_text, over_limit, failed):
        self.leaked = leaked
        self.growth = growth
        self.increase = increase
        self.increase_text = increase_text
        self.over_limit = over_limit
        self.failed = failed

    @classmethod
    def of_check(cls, process):
        checks = {c["name"]: c for c in process["checks"]}
        increase = checks.get("peak_increase")
        return cls(checks["leaks"]["value"] or 0, checks.get("growth", {}).get("value") or 0,
                   increase["value"] if increase else None,
                   increase["summary"].split(" more")[0] if increase else None,
                   bool(increase) and not increase["passed"],
                   [(c["name"], c["summary"], c.get("findings", [])) for c in process["checks"]
                    if not c["passed"] and c["name"] != "errors"])

    @classmethod
    def of_empty_phase(cls, limit):
        """What check says of a phase marked once with no event in it: nothing allocated
        in it, so nothing leaked, nothing grows, and the device memory never rose above its
        level at the push ("0 B": check's text for zero bytes); no check fails."""
        return cls(0, 0, 0 if limit is not None else None, "0 B" if limit is not None else None,
                   False, [])

    @classmethod
    def of_account(cls, account, limit):
        """What check says of a phase marked once that the recorder accounted, when its
        figures settle it (include/gpumemtrace.h): every device allocation it made was freed
        in it or is a segment the caching allocator holds (its cache, which check does not
        count), and every tensor (a caching allocator's block) it made was freed in it, so
        nothing leaked; no allocation stack's live bytes from it took three different
        levels, so nothing grows from it; and its peak increase is exact (nothing allocated
        before it was freed in it) and within the limit, or there is no limit. Otherwise
        None: check decides, and gives the stacks of a failure."""
        unsettled = account.unsettled & ~(_ACCOUNT_FREED_BEFORE if limit is None else 0)
        unsettled &= ~_ACCOUNT_BLOCKS
        if (unsettled or account.live_allocations != account.cached_allocations
                or account.live_blocks):
            return None
        if limit is None:
            return cls(0, 0, None, None, False, [])
        increase = account.peak_increase_bytes
        if increase > limit:
            return None
        return cls(0, 0, increase, _format_bytes(increase), False, [])


_SITES_SHOWN = 5  # sites per failed check in a failure's text
_FRAMES_SHOWN = 3  # frames per site, the user's line first


def _failure_text(nodeid, failed):
    """One short block for a failed test: each failed check's verdict, then per site its
    size and its first frames, the user's own line first (`check` orders every stack so,
    docs/configuration.md "Stacks in text") with the line saying how it reached CUDA. The
    whole stacks are in the trace: `gpumemtrace report --phase TEST TRACE`."""
    text = ["GPU memory verdict of %s (gpumemtrace):" % nodeid]
    for name, summary, findings in failed:
        text.append("  FAIL %s: %s" % (name, summary))
        for finding in findings[:_SITES_SHOWN]:
            head = "    %s allocated at: " % _format_bytes(finding.get("bytes", 0))
            frames = 0
            for line in finding.get("stack", []):
                if line.startswith("... "):
                    continue
                if not line.startswith("  via "):
                    if frames == _FRAMES_SHOWN:
                        break
                    frames += 1
                text.append(head + line.strip())
                head = " " * len(head)
        if len(findings) > _SITES_SHOWN:
            text.append("    ... %d more sites" % (len(findings) - _SITES_SHOWN))
    return "\n".join(text)


class GpuMemTrace:
    """The per-test phases and verdicts of one pytest process."""

    def __init__(self, config, recorder, cli):
        self.config = config
        self.recorder = recorder
        self.cli = cli
        self.no_leaks = config.getoption("gpumemtrace_no_leaks")
        growth = config.getoption("gpumemtrace_max_growth")
        self.max_growth = parse_size(growth) if growth is not None else None
        self.always_check = config.getoption("gpumemtrace_always_check")
        self.verdicts = []  # (nodeid, verdict line, failed)
        self.from_empty = 0  # verdicts of tests that recorded nothing
        self.from_account = 0  # verdicts from the recorder's accounting of the test
        self.from_check = 0  # `gpumemtrace check` runs

    def _check(self, item, limit, no_leaks):
        """`gpumemtrace check` of the trace so far, for this test's phase."""
        self.from_check += 1
        self.recorder.flush()
        args = [self.cli, "check", self.recorder.path, "--phase", item.nodeid, "--format",
                "json", "--allow-incomplete", "--no-fail-on-errors", "--top", "5",
                "--max-leaked-bytes", "0" if no_leaks else str(1 << 62)]
        if limit is not None:
            args += ["--max-peak-increase", str(limit)]
        max_growth = 0 if no_leaks else self.max_growth
        if max_growth is not None:
            args += ["--max-growth", str(max_growth)]
        run = subprocess.run(args, capture_output=True, text=True,
                             env=_without_recorder(os.environ))
        if run.returncode not in (0, 1):
            raise RuntimeError("gpumemtrace check failed (exit %d): %s"
                               % (run.returncode, run.stderr.strip()))
        return _Verdict.of_check(json.loads(run.stdout)["processes"][0])

    def _verdict(self, item, limit, no_leaks, first_push):
        """The recorder's count or accounting when it settles the verdict, else
        `gpumemtrace check`."""
        if first_push and not self.always_check:
            if self.recorder.popped_phase_was_empty():
                self.from_empty += 1
                return _Verdict.of_empty_phase(limit)
            account = self.recorder.phase_account()
            verdict = _Verdict.of_account(account, limit) if account is not None else None
            if verdict is not None:
                self.from_account += 1
                return verdict
        return self._check(item, limit, no_leaks)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        limit_marker = item.get_closest_marker("gpu_limit_memory")
        limit = None
        if limit_marker is not None:
            if len(limit_marker.args) != 1:
                raise pytest.UsageError("gpu_limit_memory takes one size, e.g. "
                                        "@pytest.mark.gpu_limit_memory(\"2 GiB\")")
            limit = parse_size(limit_marker.args[0])
        no_leaks = self.no_leaks or item.get_closest_marker("gpu_no_leaks") is not None
        first_push = item.nodeid not in _PUSHED
        _PUSHED.add(item.nodeid)
        self.recorder.push(item.nodeid.encode())
        try:
            outcome = yield
        finally:
            self.recorder.pop()
        verdict = self._verdict(item, limit, no_leaks, first_push)
        item.user_properties.append(("gpumemtrace_leaked_bytes", verdict.leaked))
        item.user_properties.append(("gpumemtrace_growth_bytes_per_iteration", verdict.growth))
        if verdict.increase is not None:
            item.user_properties.append(("gpumemtrace_peak_increase_bytes", verdict.increase))
        words = []
        if verdict.leaked:
            words.append("leaked " + _format_bytes(verdict.leaked))
        if verdict.growth:
            words.append("grows " + _format_bytes(verdict.growth) + "/iteration")
        if verdict.increase_text is not None:
            words.append(("over limit: " if verdict.over_limit else "peak +")
                         + verdict.increase_text)
        line = ", ".join(words) or "ok"
        self.verdicts.append((item.nodeid, line, bool(verdict.failed)))
        if verdict.failed and outcome.excinfo is None:
            pytest.fail(_failure_text(item.nodeid, verdict.failed), pytrace=False)

    def pytest_terminal_summary(self, terminalreporter):
        terminalreporter.section("gpumemtrace: GPU memory per test")
        terminalreporter.write_line("trace: " + self.recorder.path)
        for nodeid, line, failed in self.verdicts:
            terminalreporter.write_line("%s %s: %s" % ("FAIL" if failed else "ok  ", nodeid,
                                                       line))
        terminalreporter.write_line(
            "verdicts: %d from the recorder (%d with nothing recorded, %d from its accounting "
            "of what the test allocated and freed), %d by gpumemtrace check"
            % (self.from_empty + self.from_account, self.from_empty, self.from_account,
               self.from_check))


def _without_recorder(env):
    """The CLI is not traced: LD_PRELOAD without libgpumemtrace.so."""
    env = dict(env)
    kept = [p for p in env.get("LD_PRELOAD", "").replace(":", " ").split()
            if not os.path.basename(p).startswith("libgpumemtrace")]
    if kept:
        env["LD_PRELOAD"] = " ".join(kept)
    else:
        env.pop("LD_PRELOAD", None)
    return env


def pytest_addoption(parser):
    group = parser.getgroup("gpumemtrace", "GPU memory verdicts per test (gpumemtrace)")
    group.addoption("--gpumemtrace", action="store_true", default=False,
                    help="make each test a phase of the gpumemtrace trace and give it GPU "
                         "memory verdicts (run under `gpumemtrace record`)")
    group.addoption("--gpumemtrace-no-leaks", action="store_true", default=False,
                    help="fail every test that leaks GPU memory or whose GPU memory grows, "
                         "as if marked gpu_no_leaks")
    group.addoption("--gpumemtrace-max-growth", metavar="SIZE", default=None,
                    help="fail tests whose GPU memory grows by more than SIZE per iteration")
    group.addoption("--gpumemtrace-require", action="store_true", default=False,
                    help="stop when not run under `gpumemtrace record` instead of warning")
    group.addoption("--gpumemtrace-always-check", action="store_true", default=False,
                    help="have every test's verdict made by `gpumemtrace check`, also for "
                         "tests in which nothing was recorded or that freed all they "
                         "allocated")
    group.addoption("--gpumemtrace-cli", metavar="PATH", default=None,
                    help="the gpumemtrace executable (default: next to the preloaded "
                         "libgpumemtrace.so, then PATH)")


def _command_under_recorder(config):
    """This very pytest run, under `gpumemtrace record`: what to type instead."""
    cli = "gpumemtrace" if shutil.which("gpumemtrace") else _find_cli(
        config.getoption("gpumemtrace_cli"))
    args = [str(a) for a in config.invocation_params.args]
    return shlex.join([cli or "gpumemtrace", "record", "--", sys.executable, "-m", "pytest",
                       *args])


_PROBLEM = []  # why this run has no verdicts, for the report header


def pytest_report_header(config):
    if _PROBLEM:
        return ["gpumemtrace: " + _PROBLEM[0]]
    return None


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu_limit_memory(size): fail when the test needs more GPU memory than "
                   "SIZE ('2 GiB') above what was in use when it began (gpumemtrace)")
    config.addinivalue_line(
        "markers", "gpu_no_leaks: fail when GPU memory the test allocated is still held when "
                   "it returns, or grows across its iterations (gpumemtrace)")
    if not config.getoption("gpumemtrace"):
        return
    recorder = _Recorder()
    problem = None
    if not recorder.available:
        problem = ("pytest is not running under the gpumemtrace recorder "
                   "(libgpumemtrace.so is not preloaded, or GPUMEMTRACE_ENABLE=0): no GPU "
                   "memory verdicts, and the gpu_limit_memory / gpu_no_leaks markers are not "
                   "checked. Run: " + _command_under_recorder(config))
    cli = _find_cli(config.getoption("gpumemtrace_cli")) if recorder.available else None
    if recorder.available and cli is None:
        problem = ("the gpumemtrace executable was not found (--gpumemtrace-cli, "
                   "$GPUMEMTRACE_CLI, next to libgpumemtrace.so, PATH): no GPU memory verdicts")
    if problem:
        _PROBLEM.append(problem)
        if config.getoption("gpumemtrace_require"):
            raise pytest.UsageError("gpumemtrace: " + problem)
        config.issue_config_time_warning(pytest.PytestConfigWarning("gpumemtrace: " + problem),
                                         stacklevel=2)
        return
    if not config.getoption("gpumemtrace_always_check"):
        recorder.start_accounting()
    config.pluginmanager.register(GpuMemTrace(config, recorder, cli), "gpumemtrace-session")
