// One recorded module opened with libdwfl at the load bias given in its ModuleInfo (the
// module cache, module_cache.h, gives 0 so that every process that loaded the object can
// share one session), after making sure the file is the object that was loaded
// (build-id), with separate debug files found through elfutils' standard lookup (build-id
// trees, .gnu_debuglink).
#pragma once

#include "symbols/dwarf/cu_index.h"
#include "symbols/dwarf/dwarf_symbolizer.h"

#include <elfutils/libdwfl.h>
#include <gpumemtrace/format/records.h>

#include <optional>
#include <string>

namespace gmt::analyzer::symbolize {

// What every module's libdwfl session shares. libdwfl keeps pointers to the callbacks
// and to the search path, so one instance must outlive all sessions and never move.
struct DwflSettings {
    explicit DwflSettings(const SymbolizeOptions& options);
    DwflSettings(const DwflSettings&) = delete;
    DwflSettings& operator=(const DwflSettings&) = delete;

    std::string sysroot;
    std::string debuginfo_path;
    char* debuginfo_path_ptr = nullptr; // null: elfutils' default path
    Dwfl_Callbacks callbacks{};
};

class ElfModule {
  public:
    ElfModule(const format::ModuleInfo& info, const DwflSettings& settings);
    ~ElfModule();
    ElfModule(const ElfModule&) = delete;
    ElfModule& operator=(const ElfModule&) = delete;

    // Null when nothing of the file can be used: only module + offset is known then.
    Dwfl_Module* handle() const { return module_; }
    CuIndex& cus() { return cus_; }
    // The file found has another build-id than recorded (and no debug file matched).
    bool buildIdMismatch() const { return mismatch_; }
    // A non-relocatable object (ET_EXEC): libdwfl ignores the bias asked for and keeps the
    // addresses the file names, which are the ones the process ran at.
    bool fixedAddresses() const { return fixed_; }
    const std::optional<ModuleProblem>& problem() const { return problem_; }
    const std::string& problemDetail() const { return detail_; }

  private:
    // Reports `file`, open as `fd` (consumed), into a fresh session at the recorded load
    // bias and keeps it if its build-id fits: equal to the recorded one when
    // `require_build_id`, else not different from it (a side without a build-id cannot be
    // checked).
    bool tryFile(const std::string& file, int fd, const format::ModuleInfo& info,
                 const DwflSettings& settings, bool require_build_id);
    void close();
    void setProblem(ModuleProblem problem, std::string detail);
    void classifyContents();

    Dwfl* dwfl_ = nullptr;
    Dwfl_Module* module_ = nullptr;
    CuIndex cus_;
    bool mismatch_ = false;
    bool fixed_ = false;
    std::optional<ModuleProblem> problem_;
    std::string detail_;
};

} // namespace gmt::analyzer::symbolize
