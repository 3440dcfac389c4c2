#include "self_modules.h"

#include <elf.h>
#include <link.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <unistd.h>

namespace gmt::symtest {

namespace {

std::string selfExecutable() {
    char buffer[4096];
    ssize_t n = ::readlink("/proc/self/exe", buffer, sizeof(buffer) - 1);
    return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

std::string buildIdFromNotes(const char* notes, size_t size, size_t align) {
    size_t offset = 0;
    auto aligned = [align](size_t n) { return (n + align - 1) & ~(align - 1); };
    while (offset + sizeof(ElfW(Nhdr)) <= size) {
        ElfW(Nhdr) header;
        std::memcpy(&header, notes + offset, sizeof(header));
        size_t name_at = offset + sizeof(header);
        size_t desc_at = name_at + aligned(header.n_namesz);
        size_t next = desc_at + aligned(header.n_descsz);
        if (next > size) {
            break;
        }
        if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
            std::memcmp(notes + name_at, "GNU", 4) == 0) {
            return std::string(notes + desc_at, header.n_descsz);
        }
        offset = next;
    }
    return {};
}

int collect(dl_phdr_info* info, size_t, void* data) {
    auto* modules = static_cast<std::vector<format::ModuleInfo>*>(data);
    format::ModuleInfo module;
    module.base = info->dlpi_addr;
    module.path = info->dlpi_name != nullptr ? info->dlpi_name : "";
    if (module.path.empty() && modules->empty()) {
        module.path = selfExecutable(); // the first entry is the executable, unnamed
    }
    uint64_t low = std::numeric_limits<uint64_t>::max(), high = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type == PT_LOAD) {
            low = std::min<uint64_t>(low, info->dlpi_addr + ph.p_vaddr);
            high = std::max<uint64_t>(high, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        } else if (ph.p_type == PT_NOTE && module.build_id.empty()) {
            module.build_id =
                buildIdFromNotes(reinterpret_cast<const char*>(info->dlpi_addr + ph.p_vaddr),
                                 ph.p_memsz, ph.p_align == 8 ? 8 : 4);
        }
    }
    if (high > low) {
        module.start = low;
        module.end = high;
        modules->push_back(std::move(module));
    }
    return 0;
}

} // namespace

std::vector<format::ModuleInfo> selfModules() {
    std::vector<format::ModuleInfo> modules;
    dl_iterate_phdr(collect, &modules);
    return modules;
}

std::optional<format::ModuleInfo> moduleContaining(const std::vector<format::ModuleInfo>& modules,
                                                   uint64_t address) {
    for (const format::ModuleInfo& module : modules) {
        if (address >= module.start && address < module.end) {
            return module;
        }
    }
    return std::nullopt;
}

} // namespace gmt::symtest
