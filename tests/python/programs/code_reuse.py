"""Code objects made, used and freed in turn, so that later ones take the memory of earlier
ones: the same name, file and first line each time, with the allocating line moved down by
0 to 4 blank lines. Every allocation is kept; those of one variant all have one size, so
the report's leak groups say which line each variant's stack named. Prints how many code
objects took the address of a freed one of another variant (the test needs some).

    code_reuse.py ROUNDS
"""
import gc
import json
import sys

import cuda

KEPT = []
VARIANTS = 5


def allocate(size):
    KEPT.append(cuda.malloc(size))  # LINE:allocate


def main():
    rounds = int(sys.argv[1])
    seen = {}  # address of a code object -> variant that had it
    reused = 0
    for i in range(rounds):
        variant = i % VARIANTS
        blank = "\n" * variant
        source = f"def generated(size):\n{blank}    allocate(size)\n"  # call on line 2 + variant
        namespace = {"allocate": allocate}
        exec(compile(source, "<generated>", "exec"), namespace)
        address = id(namespace["generated"].__code__)
        if seen.get(address, variant) != variant:
            reused += 1
        seen[address] = variant
        namespace["generated"](1000 * (variant + 1))
        del namespace
        gc.collect()
    print(json.dumps({"reused": reused, "variants": VARIANTS}), flush=True)


main()
