"""Reading a memory-viz snapshot (`gpumemtrace export --format memory-viz`) the way PyTorch's
memory viewer does, for the tests that check one (tests/export/export_e2e.py,
tests/frameworks/frameworks_test.py)."""
import pickle
import pickletools

from e2e_case import expect

# The opcodes the JavaScript unpickler of PyTorch's memory viewer (MemoryViz.js, behind
# pytorch.org/memory_viz) implements; anything else makes it throw "UNKNOWN OPCODE".
VIEWER_OPCODES = {
    "PROTO", "APPEND", "APPENDS", "LIST", "TUPLE", "NEWFALSE", "NEWTRUE", "NONE", "BINGET",
    "BININT", "BININT1", "BININT2", "EMPTY_DICT", "EMPTY_LIST", "FRAME", "LONG1",
    "LONG_BINGET", "MARK", "MEMOIZE", "BINPUT", "LONG_BINPUT", "SETITEMS", "SETITEM", "DICT",
    "SHORT_BINUNICODE", "BINUNICODE", "STOP", "EMPTY_TUPLE", "TUPLE1", "TUPLE2", "TUPLE3",
    "BINFLOAT",
}


def load_snapshot(path):
    """The snapshot, after checking that the viewer's unpickler can read every opcode."""
    with open(path, "rb") as f:
        data = f.read()
    ops = {op.name for op, _, _ in pickletools.genops(data)}
    expect(ops <= VIEWER_OPCODES, "opcodes the memory viewer cannot read: %s" % (ops - VIEWER_OPCODES))
    return pickle.loads(data)
