// Python frames of a trace, made readable: the line an instruction offset is on, from the
// code object's line table (whose layout depends on the interpreter version), and the merge
// of a stack's Python frames into its native frames at the evaluation frames that ran them.
#pragma once

#include <gpumemtrace/format/records.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace gmt::analyzer {

// "3.11.2" from PY_VERSION_HEX 0x030b02f0 ("3.13.0rc1" for a release candidate); "" for 0
// (no CPython seen).
std::string pythonVersionText(uint32_t hex);

// The source line of the instruction at `instruction` (code units) of `code`; 0 when the
// table says it has none or does not reach it.
int pythonLine(const format::PythonCodeInfo& code, uint32_t instruction);

// One Python frame, resolved.
struct PythonSourceFrame {
    std::string function; // qualified name (3.11+), plain name (3.10)
    std::string file;
    int line = 0;
};

// `frame` resolved with `codes` (a process's PythonCode records); a frame whose code
// record is missing is named "<unknown code N>".
PythonSourceFrame
resolvePythonFrame(const format::PythonFrame& frame,
                   const std::unordered_map<uint32_t, format::PythonCodeInfo>& codes);

// The order in which a stack's frames are shown: native frame indexes and Python frame
// indexes, innermost first. Each run of Python frames takes the place of the native
// evaluation frame that ran it (its position); those placed past the native frames follow
// them. `native_depth` native frames, `python` innermost first.
struct MergedFrame {
    bool python = false;
    uint32_t index = 0; // into the native frames or into `python`
};
std::vector<MergedFrame> mergeFrames(uint32_t native_depth,
                                     const std::vector<format::PythonFrame>& python);

} // namespace gmt::analyzer
