// The elfutils (libdw) implementation of gmt::analyzer::Symbolizer: function, source
// file, line and inline frames for the recorded return addresses. Each instance is one
// process's module map; the files themselves are opened lazily, once per object, in a
// ModuleCache (module_cache.h) that instances may share, and resolved addresses are
// cached there because the same stacks repeat thousands of times in a trace and across
// the processes of a job.
//
// One instance per thread; instances on several threads may share one cache. Nothing is
// ever written to stdout or stderr; module problems go to SymbolizeOptions::on_problem,
// once per object (per cache).
#pragma once

#include "symbols/symbolizer.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace gmt::analyzer {

// Why a module could not be symbolized as recorded. Reported once per module.
enum class ModuleProblem {
    Missing,         // the file is not there (deleted, other machine, vdso)
    Unreadable,      // it is there but cannot be opened (no permission, a loop of links)
    NotElf,          // not a regular file, or not an ELF object libdw accepts
    BuildIdMismatch, // the file was rebuilt since the trace; no debug file for the old id
    NoDebugInfo,     // symbol table only: functions without file/line
    NoSymbols,       // neither DWARF nor a symbol table: module + offset only
};

std::string_view moduleProblemName(ModuleProblem problem);

struct SymbolizeOptions {
    // Prefixed to every module path, for traces taken on another machine or inside a
    // container whose root filesystem is mounted here.
    std::string sysroot;
    // Where separate debug files are searched, in elfutils' syntax (colon-separated
    // directories; see dwfl_standard_find_debuginfo). Empty: elfutils' default
    // ":.debug:/usr/lib/debug". Its absolute directories are also searched for
    // .build-id/xx/yyyy.debug when the module's own file is missing or rebuilt.
    std::string debuginfo_path;
    bool demangle = true;
    // false: only the outermost (real) function of an inlined call chain.
    bool inline_frames = true;
    // Called once per module with a problem; `detail` is libdw's or the OS's message.
    std::function<void(const format::ModuleInfo&, ModuleProblem, std::string_view detail)>
        on_problem;
};

namespace symbolize {
class ModuleCache;
}

// With a cache of its own.
std::unique_ptr<Symbolizer> makeDwarfSymbolizer(SymbolizeOptions options = {});
// Sharing `cache` (and its options) with every other symbolizer made with it.
std::unique_ptr<Symbolizer> makeDwarfSymbolizer(std::shared_ptr<symbolize::ModuleCache> cache);

// Appended to Frame::module when the file on disk has another build-id than the one
// recorded and no debug file for the recorded one was found: the frame then carries
// module + address only, since symbols of a different build would be wrong.
inline constexpr std::string_view kBuildIdMismatchSuffix = " [build-id mismatch]";

} // namespace gmt::analyzer
