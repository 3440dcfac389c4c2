// Where CPython keeps what a Python stack needs, per interpreter version: the byte offsets
// of the fields read from the thread state, the frames, the code objects and the str and
// bytes objects they point to. 3.10, 3.11 and 3.12 come from tables here (the structures of
// their public and internal headers, on 64-bit Linux); 3.13 from the offsets table the
// interpreter itself carries (_Py_DebugOffsets, at the start of _PyRuntime).
// docs/python.md lists every field, where it comes from and why reading it is safe.
#pragma once

#include <gpumemtrace/format/records.h>

#include <cstdint>
#include <optional>

namespace gmt::preload::python {

// How the frames of one native evaluation call are told apart in the frame chain.
enum class Segments : uint8_t {
    PerFrame,   // 3.10: every frame is run by a call of its own
    EntryFlag,  // 3.11: the outermost frame of a call has is_entry set
    CStackOwner // 3.12+: each call pushes an entry frame owned by the C stack
};

// How a frame says where it is in its code.
enum class Instruction : uint8_t {
    LastiIndex,    // 3.10: int f_lasti, an index in code units
    PointerToUnit, // 3.11+: a pointer to the executing code unit (prev_instr / instr_ptr)
};

inline constexpr uint32_t kNoField = UINT32_MAX;
inline constexpr uint8_t kOwnedByGenerator = 1; // _PyInterpreterFrame.owner values, 3.11+
inline constexpr uint8_t kOwnedByCStack = 3;

struct Layout {
    uint32_t version = 0; // PY_VERSION_HEX this layout was chosen for
    // PyThreadState
    uint32_t tstate_interp = 0;
    uint32_t tstate_cframe = kNoField;        // 3.11, 3.12: tstate->cframe, then ...
    uint32_t cframe_current_frame = kNoField; // ... cframe->current_frame
    uint32_t tstate_frame = kNoField;         // 3.10: tstate->frame; 3.13: current_frame
    // the frame (PyFrameObject in 3.10, _PyInterpreterFrame from 3.11)
    uint32_t frame_code = 0;
    uint32_t frame_previous = 0;
    uint32_t frame_instruction = 0;
    uint32_t frame_owner = kNoField;    // 3.11+
    uint32_t frame_is_entry = kNoField; // 3.11
    Segments segments = Segments::PerFrame;
    Instruction instruction = Instruction::LastiIndex;
    // PyCodeObject
    uint32_t code_size = 16; // ob_size: code units (3.11+); 3.10 has no ob_size
    uint32_t code_filename = 0;
    uint32_t code_name = 0; // co_qualname from 3.11, co_name in 3.10
    uint32_t code_first_line = 0;
    uint32_t code_line_table = 0;
    uint32_t code_units = kNoField;           // co_code_adaptive (3.11+)
    uint32_t code_bytecode = kNoField;        // co_code, a bytes object (3.10)
    uint32_t code_first_traceable = kNoField; // _co_firsttraceable (3.11+)
    uint32_t code_version = kNoField;         // co_version (3.12+): unique per code object
    format::PythonLineTable line_table = format::PythonLineTable::Locations311;
    // PyObject, str (PyASCIIObject / PyCompactUnicodeObject), bytes
    uint32_t object_type = 8;
    uint32_t str_length = 16;
    uint32_t str_hash = 24;
    uint32_t str_state = 32;
    uint32_t str_ascii_size = 0;   // sizeof(PyASCIIObject): ASCII data follows
    uint32_t str_compact_size = 0; // sizeof(PyCompactUnicodeObject): other compact data
    uint32_t bytes_size = 16;
    uint32_t bytes_data = 32;
};

// The built-in table for 3.10, 3.11 or 3.12 (any patch release); nothing for others.
std::optional<Layout> builtinLayout(uint32_t version);

// 3.13 from its _Py_DebugOffsets, read from `runtime` (the address of _PyRuntime) with
// faultless reads. Nothing when the table is not there, not of a 3.13 non-free-threaded
// build, or its version differs from `version`. co_version and _co_firsttraceable are not in
// the table: they are filled in only when the table's code object offsets are exactly
// those of the 3.13 headers, the layout those two fields were taken from.
std::optional<Layout> layoutFromDebugOffsets(uintptr_t runtime, uint32_t version);

} // namespace gmt::preload::python
