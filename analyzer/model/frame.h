// One source-level frame, the unit every stack in a report is made of. Here, below both the
// symbolizer that makes frames and the views that print them, so that neither needs the other.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gmt::analyzer {

// Where a frame's code lives: machine code, or a Python function (the recorder may record
// the interpreter's stack beside the native one).
enum class FrameLanguage : uint8_t { Native, Python };

// An address inside inlined code yields several native frames, the innermost first; all but
// the last (the real, outermost function) have inlined = true. A Python frame has function,
// file and line; its address, module and offset are empty.
struct Frame {
    FrameLanguage language = FrameLanguage::Native;
    uint64_t address = 0;           // the recorded address (return address - 1), absolute
    std::optional<uint64_t> offset; // address - the module's load bias, when a module covers it
    std::string module;             // path of the ELF object, empty when no module covers it
    std::string function;           // demangled; empty when unknown
    std::string file;               // source file; empty when unknown
    int line = 0;                   // 0 when unknown
    bool inlined = false;
    // The user's own code (report/own_code.h): views lead a stack with its innermost own
    // frame and fold the library frames around it.
    bool own = false;
};

// Innermost frame first.
using Stack = std::vector<Frame>;

} // namespace gmt::analyzer
