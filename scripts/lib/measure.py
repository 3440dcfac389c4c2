#!/usr/bin/env python3
"""measure.py OUT CMD...: runs CMD and writes "WALL_S CPU_S" to OUT, where CPU is user +
system time of CMD and of every descendant it waited for (wait4's rusage, microsecond
resolution; GNU time prints 10 ms). CMD's output goes to this script's. Exit status: CMD's."""
import os
import subprocess
import sys
import time

out, cmd = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
proc = subprocess.Popen(cmd)
_, status, usage = os.wait4(proc.pid, 0)
wall = time.perf_counter() - t0
with open(out, "w") as f:
    f.write(f"{wall:.6f} {usage.ru_utime + usage.ru_stime:.6f}\n")
sys.exit(os.waitstatus_to_exitcode(status))
