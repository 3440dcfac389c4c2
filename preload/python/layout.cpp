#include "layout.h"

#include "safe_memory.h"

#include <cstddef>
#include <cstring>

namespace gmt::preload::python {
namespace {

// Fields every supported version shares: the PyObject header, PyVarObject's ob_size, the
// first fields of PyASCIIObject (length, hash, state) and PyBytesObject.
Layout common(uint32_t version) {
    Layout l;
    l.version = version;
    l.tstate_interp = 16; // PyThreadState: prev, next, interp
    return l;
}

// Include/cpython/pystate.h, Include/cpython/frameobject.h, Include/cpython/code.h,
// Include/cpython/unicodeobject.h of 3.10.
Layout layout310(uint32_t version) {
    Layout l = common(version);
    l.tstate_frame = 24; // PyFrameObject *frame
    // PyFrameObject: PyObject_VAR_HEAD, f_back, f_code, ..., int f_lasti at 96.
    l.frame_previous = 24;
    l.frame_code = 32;
    l.frame_instruction = 96;
    l.segments = Segments::PerFrame;
    l.instruction = Instruction::LastiIndex;
    // PyCodeObject: PyObject_HEAD, seven ints (co_firstlineno the last), co_code, ...
    l.code_size = kNoField;
    l.code_first_line = 40;
    l.code_bytecode = 48;
    l.code_filename = 104;
    l.code_name = 112;
    l.code_line_table = 120;
    l.line_table = format::PythonLineTable::Pairs310;
    l.str_ascii_size = 48; // PyASCIIObject still has wchar_t *wstr
    l.str_compact_size = 72;
    return l;
}

// 3.11: Include/internal/pycore_frame.h (_PyInterpreterFrame), pystate.h (_PyCFrame).
Layout layout311(uint32_t version) {
    Layout l = common(version);
    l.tstate_cframe = 56;
    l.cframe_current_frame = 8; // after uint8_t use_tracing
    // _PyInterpreterFrame: f_func, f_globals, f_builtins, f_locals, f_code, frame_obj,
    // previous, prev_instr, int stacktop, bool is_entry, char owner.
    l.frame_code = 32;
    l.frame_previous = 48;
    l.frame_instruction = 56;
    l.frame_is_entry = 68;
    l.frame_owner = 69;
    l.segments = Segments::EntryFlag;
    l.instruction = Instruction::PointerToUnit;
    l.code_first_line = 72;
    l.code_filename = 112;
    l.code_name = 128; // co_qualname
    l.code_line_table = 136;
    l.code_first_traceable = 168;
    l.code_units = 184;
    l.str_ascii_size = 48;
    l.str_compact_size = 72;
    return l;
}

// 3.12: tstate->cframe (a _PyCFrame whose first field is current_frame); the frame starts
// with f_code and previous; PyCodeObject gained co_version, a counter value no two code
// objects share; wstr left PyASCIIObject.
Layout layout312(uint32_t version) {
    Layout l = common(version);
    l.tstate_cframe = 56;
    l.cframe_current_frame = 0;
    // _PyInterpreterFrame: f_code, previous, f_funcobj, f_globals, f_builtins, f_locals,
    // frame_obj, prev_instr, int stacktop, uint16_t return_offset, char owner.
    l.frame_code = 0;
    l.frame_previous = 8;
    l.frame_instruction = 56;
    l.frame_owner = 70;
    l.segments = Segments::CStackOwner;
    l.instruction = Instruction::PointerToUnit;
    l.code_first_line = 68;
    l.code_version = 92;
    l.code_filename = 112;
    l.code_name = 128;
    l.code_line_table = 136;
    l.code_first_traceable = 176;
    l.code_units = 192;
    l.str_ascii_size = 40;
    l.str_compact_size = 56;
    return l;
}

// 3.13's Include/internal/pycore_runtime.h, _Py_DebugOffsets, up to the fields used here.
// Every member is a uint64_t offset (or size) into the structure it names.
struct DebugOffsets313 {
    char cookie[8];
    uint64_t version;
    uint64_t free_threaded;
    uint64_t runtime_state[3];
    uint64_t interpreter_state[13];
    struct {
        uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
            datastack_chunk, status;
    } thread_state;
    struct {
        uint64_t size, previous, executable, instr_ptr, localsplus, owner;
    } interpreter_frame;
    struct {
        uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames,
            localspluskinds, co_code_adaptive;
    } code_object;
    struct {
        uint64_t size, ob_type;
    } pyobject;
    uint64_t type_object[4];
    uint64_t tuple_object[3];
    uint64_t list_object[3];
    uint64_t dict_object[3];
    uint64_t float_object[2];
    uint64_t long_object[3];
    struct {
        uint64_t size, ob_size, ob_sval;
    } bytes_object;
    struct {
        uint64_t size, state, length, asciiobject_size;
    } unicode_object;
};
// The positions in the real 3.13 structure, checked against its header.
static_assert(offsetof(DebugOffsets313, thread_state.current_frame) == 184);
static_assert(offsetof(DebugOffsets313, interpreter_frame.owner) == 264);
static_assert(offsetof(DebugOffsets313, code_object.co_code_adaptive) == 344);
static_assert(offsetof(DebugOffsets313, pyobject.ob_type) == 360);
static_assert(offsetof(DebugOffsets313, bytes_object.ob_sval) == 528);
static_assert(offsetof(DebugOffsets313, unicode_object.asciiobject_size) == 560);

// The table cannot say where a field it does not list lives; these fit only the code object
// layout of the 3.13 headers, recognised by the offsets the table does list.
bool isHeaderCodeLayout313(const DebugOffsets313& d) {
    return d.code_object.filename == 112 && d.code_object.name == 120 &&
           d.code_object.qualname == 128 && d.code_object.linetable == 136 &&
           d.code_object.firstlineno == 68 && d.code_object.co_code_adaptive == 200;
}

bool fits(uint64_t offset, uint64_t limit = 4096) {
    return offset < limit;
}

} // namespace

std::optional<Layout> builtinLayout(uint32_t version) {
    switch (version >> 16) {
    case 0x030a:
        return layout310(version);
    case 0x030b:
        return layout311(version);
    case 0x030c:
        return layout312(version);
    default:
        return std::nullopt;
    }
}

std::optional<Layout> layoutFromDebugOffsets(uintptr_t runtime, uint32_t version) {
    if ((version >> 16) != 0x030d) {
        return std::nullopt;
    }
    DebugOffsets313 d;
    if (!safeRead(runtime, &d, sizeof d) || std::memcmp(d.cookie, "xdebugpy", 8) != 0 ||
        d.version != version || d.free_threaded != 0) {
        return std::nullopt;
    }
    const uint64_t fields[] = {d.thread_state.interp,
                               d.thread_state.current_frame,
                               d.interpreter_frame.previous,
                               d.interpreter_frame.executable,
                               d.interpreter_frame.instr_ptr,
                               d.interpreter_frame.owner,
                               d.code_object.filename,
                               d.code_object.qualname,
                               d.code_object.linetable,
                               d.code_object.firstlineno,
                               d.code_object.co_code_adaptive,
                               d.pyobject.ob_type,
                               d.bytes_object.ob_size,
                               d.bytes_object.ob_sval,
                               d.unicode_object.state,
                               d.unicode_object.length,
                               d.unicode_object.asciiobject_size};
    for (uint64_t f : fields) {
        if (!fits(f)) {
            return std::nullopt;
        }
    }
    Layout l;
    l.version = version;
    l.tstate_interp = static_cast<uint32_t>(d.thread_state.interp);
    l.tstate_frame = static_cast<uint32_t>(d.thread_state.current_frame);
    l.frame_code = static_cast<uint32_t>(d.interpreter_frame.executable);
    l.frame_previous = static_cast<uint32_t>(d.interpreter_frame.previous);
    l.frame_instruction = static_cast<uint32_t>(d.interpreter_frame.instr_ptr);
    l.frame_owner = static_cast<uint32_t>(d.interpreter_frame.owner);
    l.segments = Segments::CStackOwner;
    l.instruction = Instruction::PointerToUnit;
    l.code_filename = static_cast<uint32_t>(d.code_object.filename);
    l.code_name = static_cast<uint32_t>(d.code_object.qualname);
    l.code_first_line = static_cast<uint32_t>(d.code_object.firstlineno);
    l.code_line_table = static_cast<uint32_t>(d.code_object.linetable);
    l.code_units = static_cast<uint32_t>(d.code_object.co_code_adaptive);
    if (isHeaderCodeLayout313(d)) {
        l.code_version = 92;
        l.code_first_traceable = 184;
    }
    l.object_type = static_cast<uint32_t>(d.pyobject.ob_type);
    l.bytes_size = static_cast<uint32_t>(d.bytes_object.ob_size);
    l.bytes_data = static_cast<uint32_t>(d.bytes_object.ob_sval);
    l.str_state = static_cast<uint32_t>(d.unicode_object.state);
    l.str_length = static_cast<uint32_t>(d.unicode_object.length);
    l.str_ascii_size = static_cast<uint32_t>(d.unicode_object.asciiobject_size);
    // PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject (3.12+).
    l.str_compact_size = l.str_ascii_size + 16;
    l.str_hash = l.str_length + 8; // Py_hash_t hash follows Py_ssize_t length
    return l;
}

} // namespace gmt::preload::python
