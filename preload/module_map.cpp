#include "module_map.h"

#include "out_of_memory.h"

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <link.h>
#include <unistd.h>

namespace gmt::preload {
namespace {

struct Counters {
    unsigned long long adds = 0;
    unsigned long long subs = 0;
};

int readCounters(dl_phdr_info* info, size_t size, void* data) {
    auto* c = static_cast<Counters*>(data);
    if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
        c->adds = info->dlpi_adds;
        c->subs = info->dlpi_subs;
    }
    return 1; // the counters are global: the first object is enough
}

std::string buildId(const dl_phdr_info* info) {
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_NOTE) {
            continue;
        }
        auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
        const uint8_t* end = p + ph.p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            auto* note = reinterpret_cast<const ElfW(Nhdr)*>(p);
            const uint8_t* name = p + sizeof(ElfW(Nhdr));
            const uint8_t* desc = name + ((note->n_namesz + 3) & ~3u);
            const uint8_t* next = desc + ((note->n_descsz + 3) & ~3u);
            if (next > end) {
                break;
            }
            if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 &&
                std::memcmp(name, "GNU", 4) == 0) {
                return std::string(reinterpret_cast<const char*>(desc), note->n_descsz);
            }
            p = next;
        }
    }
    return {};
}

struct Walk {
    std::vector<format::ModuleInfo> found;
    bool out_of_memory = false;
};

void collectOne(const dl_phdr_info* info, std::vector<format::ModuleInfo>& found) {
    format::ModuleInfo m;
    m.base = info->dlpi_addr;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type == PT_LOAD) {
            lo = std::min<uint64_t>(lo, info->dlpi_addr + ph.p_vaddr);
            hi = std::max<uint64_t>(hi, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        }
    }
    if (hi == 0) {
        return;
    }
    m.start = lo;
    m.end = hi;
    if (info->dlpi_name && *info->dlpi_name) {
        m.path = info->dlpi_name;
    } else {
        // The main program has an empty name here.
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
        m.path = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string();
    }
    m.build_id = buildId(info);
    found.push_back(std::move(m));
}

int collect(dl_phdr_info* info, size_t, void* data) {
    auto* walk = static_cast<Walk*>(data);
    // Caught here, not around dl_iterate_phdr: the loader holds its lock across this call.
    if (!withoutThrowing([&] { collectOne(info, walk->found); })) {
        walk->out_of_memory = true;
        return 1; // the walk stops
    }
    return 0;
}

} // namespace

void ModuleMap::refresh(EmitFn emit, void* ctx) {
    Counters c;
    dl_iterate_phdr(readCounters, &c);
    if (c.adds == adds_ && c.subs == subs_) {
        return;
    }
    Walk walk;
    dl_iterate_phdr(collect, &walk);
    if (walk.out_of_memory) {
        // Out of host memory: the counters are not taken, so the next new stack walks again
        // and emits what this walk could not.
        return;
    }
    if (c.subs != 0) {
        // Something was unloaded: forget what is gone so a reload at the same address is
        // written again.
        std::erase_if(emitted_, [&](const Known& k) {
            return std::none_of(walk.found.begin(), walk.found.end(), [&](const auto& m) {
                return m.start == k.start && m.end == k.end;
            });
        });
    }
    for (const format::ModuleInfo& m : walk.found) {
        bool known = std::any_of(emitted_.begin(), emitted_.end(), [&](const Known& k) {
            return k.start == m.start && k.end == m.end;
        });
        if (!known) {
            // Remembered before it is written: a module the list has no room for is written
            // by a later walk (the counters are not taken), never twice.
            if (!withoutThrowing([&] { emitted_.push_back({m.start, m.end}); })) {
                return;
            }
            emit(m, ctx);
        }
    }
    adds_ = c.adds;
    subs_ = c.subs;
}

void ModuleMap::reset() {
    adds_ = ~0ull;
    subs_ = ~0ull;
    emitted_.clear();
}

} // namespace gmt::preload
