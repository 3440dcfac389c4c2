"""What the end-to-end test drivers written in Python share (tests/cli/cli_e2e.py,
tests/python/python_stacks_test.py): one case per process, as ctest runs them, each a
function `test_<name>` of the driver; exit 0 pass, 1 fail, 77 skipped (a piece the case
needs is not built yet, or absent)."""
import os
import re
import shutil

SKIP = 77


class Skip(Exception):
    pass


def fail(message, result=None):
    if result is not None:
        message += "\n--- exit %d\n--- stdout\n%s\n--- stderr\n%s" % (
            result.returncode, result.stdout[-4000:], result.stderr[-4000:])
    raise AssertionError(message)


def expect(condition, message, result=None):
    if not condition:
        fail(message, result)


def run_case(namespace, args):
    """Runs namespace["test_" + args.case] in a fresh args.workdir/<case>, which becomes
    args.workdir; returns the exit status."""
    args.workdir = os.path.join(args.workdir, args.case)
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    test = namespace.get("test_" + args.case)
    if test is None:
        print("no such case: " + args.case)
        return 2
    try:
        test()
    except Skip as e:
        print("SKIP: %s" % e)
        return SKIP
    except AssertionError as e:
        print("FAIL: %s" % e)
        return 1
    print("PASS")
    return 0


def marker_lines(path):
    """{"alloc": 13, ...} from the `# LINE:name` comments of a program."""
    lines = {}
    with open(path) as f:
        for number, text in enumerate(f, 1):
            m = re.search(r"# LINE:(\w+)", text)
            if m:
                lines[m.group(1)] = number
    return lines
