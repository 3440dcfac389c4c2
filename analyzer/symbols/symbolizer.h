// Turning return addresses into source locations. The analyzer only depends on this
// interface; the libdw implementation lives in analyzer/symbols/dwarf/ (target
// gmt_symbolize, factory makeDwarfSymbolizer() in symbolize/dwarf_symbolizer.h) and the
// fallback below is used when that target is absent, when --no-symbols is given, or for
// addresses the DWARF symbolizer cannot resolve.
#pragma once

#include "model/frame.h"
#include "symbols/module_index.h"

#include <gpumemtrace/format/records.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gmt::analyzer {

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
// else the module + offset fallback. `symbols == false` forces the fallback. All DWARF
// symbolizers made here share one bounded cache of opened objects for the whole run
// (symbols/dwarf/module_cache.h), and a module that cannot be opened or read is warned
// about once (base/warnings.h).
std::unique_ptr<Symbolizer> makeSymbolizer(bool symbols);

// Whether this build has the DWARF symbolizer (else frames are module + offset only).
bool dwarfSymbolizerAvailable();

} // namespace gmt::analyzer
