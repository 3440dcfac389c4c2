#include "symbols/dwarf/elf_module.h"

#include "base/hex.h"
#include "base/regular_file.h"
#include "symbols/dwarf/build_id.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <gelf.h>
#include <string_view>
#include <unistd.h>

namespace gmt::analyzer::symbolize {

DwflSettings::DwflSettings(const SymbolizeOptions& options)
    : sysroot(options.sysroot), debuginfo_path(options.debuginfo_path) {
    debuginfo_path_ptr = debuginfo_path.empty() ? nullptr : debuginfo_path.data();
    callbacks.find_elf = dwfl_build_id_find_elf;
    callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
    callbacks.section_address = dwfl_offline_section_address;
    callbacks.debuginfo_path = &debuginfo_path_ptr;
}

namespace {

enum class Outcome { Opened, Missing, Unreadable, NotElf, Mismatch };

struct Attempt {
    Outcome outcome;
    std::string detail;
};

// A file that exists but could not be opened (no permission, a loop of links), told apart
// from one that is not there at all: only the first is worth a warning.
bool absent(const std::string& why) {
    return why == std::strerror(ENOENT) || why == std::strerror(ENOTDIR);
}

std::string_view asView(const unsigned char* bits, int len) {
    if (len <= 0) {
        return {};
    }
    return {reinterpret_cast<const char*>(bits), static_cast<size_t>(len)};
}

} // namespace

ElfModule::ElfModule(const format::ModuleInfo& info, const DwflSettings& settings) {
    Attempt first{Outcome::Missing, "no path recorded"};
    if (!info.path.empty()) {
        const std::string file = settings.sysroot + info.path;
        // Opened here, and handed to libdwfl as a descriptor, to tell a missing file from
        // one libelf rejects (libdwfl folds both into one error code), and because the
        // path comes from the trace: only a regular file is ever opened
        // (base/regular_file.h), and libdwfl reads that very file instead of opening the
        // path again (which could name something else by then).
        std::string why;
        bool not_regular = false;
        std::optional<OpenedFile> f = openRegularFile(file, why, &not_regular);
        if (!f) {
            first = {not_regular   ? Outcome::NotElf
                     : absent(why) ? Outcome::Missing
                                   : Outcome::Unreadable,
                     file + ": " + why};
        } else {
            first.outcome = Outcome::Opened;
            if (!tryFile(file, f->fd, info, settings, false)) {
                first = {mismatch_ ? Outcome::Mismatch : Outcome::NotElf, detail_};
            }
        }
    }
    if (first.outcome == Outcome::Opened) {
        classifyContents();
        return;
    }
    // The recorded build-id still names the right object: a debug file installed for it
    // (or a copy of the object) has the same program headers, so it maps to the same
    // addresses and carries the symbols of the build that actually ran.
    for (const std::string& candidate : buildIdCandidates(info.build_id, settings.debuginfo_path)) {
        std::string why;
        std::optional<OpenedFile> f = openRegularFile(candidate, why);
        if (f && tryFile(candidate, f->fd, info, settings, true)) {
            mismatch_ = false;
            detail_.clear();
            classifyContents();
            return;
        }
    }
    mismatch_ = first.outcome == Outcome::Mismatch;
    switch (first.outcome) {
    case Outcome::Missing:
        setProblem(ModuleProblem::Missing, first.detail);
        break;
    case Outcome::Unreadable:
        setProblem(ModuleProblem::Unreadable, first.detail);
        break;
    case Outcome::NotElf:
        setProblem(ModuleProblem::NotElf, first.detail);
        break;
    case Outcome::Mismatch:
        setProblem(ModuleProblem::BuildIdMismatch, first.detail);
        break;
    case Outcome::Opened:
        break;
    }
}

ElfModule::~ElfModule() {
    close();
}

void ElfModule::close() {
    if (dwfl_ != nullptr) {
        dwfl_end(dwfl_);
    }
    dwfl_ = nullptr;
    module_ = nullptr;
}

bool ElfModule::tryFile(const std::string& file, int fd, const format::ModuleInfo& info,
                        const DwflSettings& settings, bool require_build_id) {
    Dwfl* dwfl = dwfl_begin(&settings.callbacks);
    if (dwfl == nullptr) {
        detail_ = std::string("dwfl_begin: ") + dwfl_errmsg(-1);
        ::close(fd);
        return false;
    }
    dwfl_report_begin(dwfl);
    // add_p_vaddr: `base` is the load bias (dlpi_addr), not the address of the first
    // segment. libdwfl itself forces the bias to 0 for ET_EXEC (non-PIE executables).
    Dwfl_Module* module =
        dwfl_report_elf(dwfl, info.path.c_str(), file.c_str(), fd, info.base, true);
    if (module == nullptr) {
        // On failure libdwfl leaves a descriptor it was given open; on success the module
        // owns it (dwfl_end closes it).
        ::close(fd);
        detail_ = file + ": " + dwfl_errmsg(-1);
        dwfl_end(dwfl);
        return false;
    }
    dwfl_report_end(dwfl, nullptr, nullptr);

    const unsigned char* bits = nullptr;
    GElf_Addr note_address = 0;
    const int length = dwfl_module_build_id(module, &bits, &note_address);
    const std::string_view found = asView(bits, length);
    const std::string_view want = info.build_id;
    const bool ok = require_build_id ? (!want.empty() && found == want)
                                     : (want.empty() || found.empty() || found == want);
    if (!ok) {
        mismatch_ = true;
        detail_ = file + ": build-id " + (found.empty() ? "none" : bytesHex(found)) +
                  ", the trace recorded " + bytesHex(want);
        dwfl_end(dwfl);
        return false;
    }
    close();
    dwfl_ = dwfl;
    module_ = module;
    GElf_Addr elf_bias = 0;
    GElf_Ehdr header{};
    Elf* elf = dwfl_module_getelf(module, &elf_bias);
    fixed_ = elf != nullptr && gelf_getehdr(elf, &header) != nullptr && header.e_type == ET_EXEC;
    return true;
}

void ElfModule::setProblem(ModuleProblem problem, std::string detail) {
    problem_ = problem;
    detail_ = std::move(detail);
}

void ElfModule::classifyContents() {
    Dwarf_Addr bias = 0;
    if (dwfl_module_getdwarf(module_, &bias) != nullptr) {
        return;
    }
    std::string why = dwfl_errmsg(-1);
    if (dwfl_module_getsymtab(module_) > 0) {
        setProblem(ModuleProblem::NoDebugInfo, "no DWARF (" + why + "): symbol table only");
    } else {
        setProblem(ModuleProblem::NoSymbols, "no DWARF (" + why + ") and no symbol table");
    }
}

} // namespace gmt::analyzer::symbolize
