#include "symbols/dwarf/module_cache.h"

#include "symbols/dwarf/dwarf_frames.h"
#include "symbols/dwarf/elf_module.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/resource.h>
#include <sys/stat.h>
#include <utility>

namespace gmt::analyzer::symbolize {

struct ModuleCache::Entry {
    std::unique_ptr<ElfModule> elf;       // the open session; null when closed or unusable
    std::list<size_t>::iterator position; // in open_, while elf is set
    bool opened = false;                  // a session was had at least once
    bool unusable = false;                // nothing of the file can be used
    bool mismatch = false;                // unusable because the build-id differs
    bool fixed = false;                   // ElfModule::fixedAddresses(), once opened
    std::optional<ModuleProblem> said;    // the problem last reported
};

namespace {

size_t defaultMaxOpen() {
    struct rlimit limit {};
    rlim_t descriptors = 1024;
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
        descriptors = limit.rlim_cur;
    }
    return std::clamp<size_t>(static_cast<size_t>(descriptors / 8), 4, 64);
}

// The process ran out of descriptors (or the system did): another attempt may succeed
// once this cache has closed its own.
bool outOfDescriptors(const std::string& detail) {
    return detail.ends_with(std::strerror(EMFILE)) || detail.ends_with(std::strerror(ENFILE));
}

std::vector<Frame> addressOnly(uint64_t address, std::string module) {
    Frame frame;
    frame.address = address;
    frame.module = std::move(module);
    return {std::move(frame)};
}

} // namespace

ModuleCache::ModuleCache(SymbolizeOptions options, ModuleCacheLimits limits)
    : options_(std::move(options)), settings_(std::make_unique<DwflSettings>(options_)),
      max_open_(limits.max_open != 0 ? limits.max_open : defaultMaxOpen()),
      max_cached_(std::max<size_t>(limits.max_cached_addresses, 1)) {}

ModuleCache::~ModuleCache() = default;

size_t ModuleCache::entryFor(const format::ModuleInfo& module) {
    // The path is part of the key even with a build-id: what is found depends on it (one
    // trace may name a file missing here, another a copy that is there). The processes of
    // one job name the same paths, and share.
    std::string key = module.path + '\0';
    if (!module.build_id.empty()) {
        key += "build-id " + module.build_id;
    } else {
        // stat(2) resolves the name without opening anything; a file that is not there
        // keys by its path alone (and is found missing once).
        struct stat st {};
        if (::stat((options_.sysroot + module.path).c_str(), &st) == 0) {
            key += std::to_string(st.st_size) + ' ' + std::to_string(st.st_mtim.tv_sec) + '.' +
                   std::to_string(st.st_mtim.tv_nsec);
        }
    }
    std::lock_guard lock(mutex_);
    auto [it, inserted] = by_key_.try_emplace(std::move(key), entries_.size());
    if (inserted) {
        entries_.push_back(std::make_unique<Entry>());
    }
    return it->second;
}

void ModuleCache::reportLocked(Entry& entry, const format::ModuleInfo& module) {
    const std::optional<ModuleProblem>& problem = entry.elf->problem();
    if (problem && problem != entry.said && options_.on_problem) {
        options_.on_problem(module, *problem, entry.elf->problemDetail());
    }
    entry.said = problem;
}

void ModuleCache::closeLeastRecentLocked() {
    Entry& victim = *entries_[open_.back()];
    open_.pop_back();
    victim.elf.reset();
}

ElfModule* ModuleCache::openLocked(size_t id, const format::ModuleInfo& module) {
    Entry& entry = *entries_[id];
    if (entry.elf) {
        open_.splice(open_.begin(), open_, entry.position);
        return entry.elf.get();
    }
    if (entry.unusable) {
        return nullptr;
    }
    while (open_.size() >= max_open_) {
        closeLeastRecentLocked();
    }
    format::ModuleInfo at_zero = module;
    at_zero.base = 0;
    entry.elf = std::make_unique<ElfModule>(at_zero, *settings_);
    if (!entry.elf->handle() && entry.elf->problem() == ModuleProblem::Unreadable &&
        outOfDescriptors(entry.elf->problemDetail())) {
        while (!open_.empty()) {
            closeLeastRecentLocked();
        }
        entry.elf = std::make_unique<ElfModule>(at_zero, *settings_);
    }
    reportLocked(entry, module);
    if (!entry.elf->handle()) {
        entry.mismatch = entry.elf->buildIdMismatch();
        entry.elf.reset();
        // A file that opened before and fails now (replaced, or descriptors ran out
        // elsewhere) is tried again next time; one that never opened is not.
        entry.unusable = !entry.opened;
        return nullptr;
    }
    entry.opened = true;
    entry.fixed = entry.elf->fixedAddresses();
    open_.push_front(id);
    entry.position = open_.begin();
    return entry.elf.get();
}

std::vector<Frame> ModuleCache::symbolize(size_t entry_id, const format::ModuleInfo& module,
                                          uint64_t address) {
    std::lock_guard lock(mutex_);
    Entry& entry = *entries_[entry_id];
    ElfModule* elf = entry.opened ? nullptr : openLocked(entry_id, module);
    if (!entry.opened) {
        std::string name = module.path;
        if (entry.mismatch) {
            name += kBuildIdMismatchSuffix;
        }
        return addressOnly(address, std::move(name));
    }
    const FrameKey key{entry_id, entry.fixed ? address : address - module.base};
    auto it = frames_.find(key);
    if (it == frames_.end()) {
        if (elf == nullptr) {
            elf = openLocked(entry_id, module);
        }
        if (elf == nullptr) {
            return addressOnly(address, module.path);
        }
        // Bounded: a report that matches suppressions against every stack of a trace asks
        // for every address once; the cache serves the repeats of a working set.
        if (frames_.size() >= max_cached_) {
            frames_.clear();
        }
        it = frames_
                 .emplace(key, resolveFrames(elf->handle(), elf->cus(), key.address,
                                             FrameOptions{.demangle = options_.demangle,
                                                          .inline_frames = options_.inline_frames}))
                 .first;
    }
    std::vector<Frame> frames = it->second;
    for (Frame& frame : frames) {
        frame.address = address;
        frame.module = module.path;
    }
    return frames;
}

size_t ModuleCache::entries() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
}

size_t ModuleCache::openModules() const {
    std::lock_guard lock(mutex_);
    return open_.size();
}

} // namespace gmt::analyzer::symbolize
