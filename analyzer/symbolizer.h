// Turning return addresses into source locations. The analyzer only depends on this
// interface; the libdw implementation lives in analyzer/symbolize/ (target
// gmt_symbolize, factory makeDwarfSymbolizer() in symbolize/dwarf_symbolizer.h) and the
// fallback below is used when that target is absent, when --no-symbols is given, or for
// addresses the DWARF symbolizer cannot resolve.
#pragma once

#include "module_index.h"

#include <gpumemtrace/trace_format.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gmt::analyzer {

// Where a frame's code lives: machine code, or a Python function (the recorder may record
// the interpreter's stack beside the native one).
enum class FrameLanguage : uint8_t { Native, Python };

// One source-level frame, the unit every stack in a report is made of. An address inside
// inlined code yields several native frames, the innermost first; all but the last (the
// real, outermost function) have inlined = true. A Python frame has function, file and
// line; its address, module and offset are empty.
struct Frame {
    FrameLanguage language = FrameLanguage::Native;
    uint64_t address = 0;           // the recorded address (return address - 1), absolute
    std::optional<uint64_t> offset; // address - the module's load bias, when a module covers it
    std::string module;             // path of the ELF object, empty when no module covers it
    std::string function;           // demangled; empty when unknown
    std::string file;               // source file; empty when unknown
    int line = 0;                   // 0 when unknown
    bool inlined = false;
};

class Symbolizer {
  public:
    virtual ~Symbolizer() = default;
    // Called for every Module record of a trace before any symbolize() call of that
    // trace. Modules of one process never overlap; a later module replacing an address
    // range (dlclose + dlopen) is given again and wins.
    virtual void addModule(const format::ModuleInfo& module) = 0;
    // Never returns an empty vector: at least one frame with `address` set.
    virtual std::vector<Frame> symbolize(uint64_t address) = 0;
};

// Module + offset only: function/file empty, line 0. `function` is left empty so that a
// consumer can tell "not symbolized" apart; the text report prints "module+0xOFFSET".
class ModuleOffsetSymbolizer final : public Symbolizer {
  public:
    void addModule(const format::ModuleInfo& module) override;
    std::vector<Frame> symbolize(uint64_t address) override;

    // The module covering `address`, or nullptr.
    const format::ModuleInfo* find(uint64_t address) const;

  private:
    ModuleIndex modules_;
};

// The best symbolizer this build has: DWARF (libdw) when gmt_symbolize was built,
// else the module + offset fallback. `symbols == false` forces the fallback.
std::unique_ptr<Symbolizer> makeSymbolizer(bool symbols);

// Whether this build has the DWARF symbolizer (else frames are module + offset only).
bool dwarfSymbolizerAvailable();

} // namespace gmt::analyzer
