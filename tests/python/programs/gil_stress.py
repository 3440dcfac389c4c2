"""N allocation/free pairs through ctypes (which releases the GIL around each call) from two
functions in turn, while another thread runs Python the whole time (calls, and code objects
made and dropped). At the end one buffer from each function is kept, so that the report
names their lines; the test checks every other event against them.

    gil_stress.py N
"""
import sys
import threading

import cuda

stop = False


def spin():
    def inner(n):
        return n * 3 + 1

    def outer(n):
        return inner(n) % 1000003

    x, made = 1, 0
    while not stop:
        x = outer(x)
        if x % 61 == 0:
            # A code object made and dropped: its memory is soon another's.
            namespace = {}
            exec(compile(f"def g(v):\n    return v + {made}\n", "<churn>", "exec"), namespace)
            x += namespace["g"](made)
            made += 1


def alloc_a(i):
    ptr = cuda.malloc(100000 + i % 1000)  # LINE:alloc_a
    return ptr


def alloc_b(i):
    ptr = cuda.malloc(200000 + i % 1000)  # LINE:alloc_b
    return ptr


def release(ptr):
    cuda.free(ptr)  # LINE:free


def main():
    global stop
    pairs = int(sys.argv[1])
    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        for i in range(pairs):
            release(alloc_a(i) if i % 2 == 0 else alloc_b(i))
        kept = [alloc_a(999), alloc_b(999)]
    finally:
        stop = True
        spinner.join()
    print(len(kept), flush=True)


main()
