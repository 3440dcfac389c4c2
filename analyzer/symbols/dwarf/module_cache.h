// The libdwfl sessions of every module a run symbolizes, shared by all its traces. A job
// of a thousand ranks records the same few objects a thousand times (the program, the
// CUDA libraries, libc); opening each once per trace cost a session (and its parsed
// DWARF) and a few descriptors per trace and module, which ran into gigabytes and into
// the descriptor limit, where names were then lost. Here an object is opened once, at
// load bias 0, and each process's addresses are moved to that bias.
//
// Bounded: at most `max_open` sessions are open at once (each holds the object's
// descriptor and that of its separate debug file, if any); the least recently used is
// closed to make room, remembering what its opening found, and reopened when needed. The
// frames of resolved addresses are kept up to `max_cached_addresses`, for all traces
// together. Thread-safe: traces are symbolized by several threads at once, and a libdwfl
// session is not, so every call holds one lock.
#pragma once

#include "symbols/dwarf/dwarf_symbolizer.h"

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace gmt::analyzer::symbolize {

class ElfModule;
struct DwflSettings;

struct ModuleCacheLimits {
    // 0: an eighth of the process's descriptor limit, within [4, 64].
    size_t max_open = 0;
    size_t max_cached_addresses = size_t{1} << 16;
};

class ModuleCache {
  public:
    explicit ModuleCache(SymbolizeOptions options, ModuleCacheLimits limits = {});
    ~ModuleCache();
    ModuleCache(const ModuleCache&) = delete;
    ModuleCache& operator=(const ModuleCache&) = delete;

    // Which entry stands for `module`: its path with its build-id when it has one, else
    // with the file's size and modification time. Never opens the file.
    size_t entryFor(const format::ModuleInfo& module);

    // The frames of `address`, which lies in `module` (whose entry is `entry`): innermost
    // first, never empty, with address and module set.
    std::vector<Frame> symbolize(size_t entry, const format::ModuleInfo& module, uint64_t address);

    size_t entries() const;
    size_t openModules() const;
    size_t maxOpen() const { return max_open_; }

  private:
    struct Entry;

    ElfModule* openLocked(size_t id, const format::ModuleInfo& module);
    void closeLeastRecentLocked();
    void reportLocked(Entry& entry, const format::ModuleInfo& module);

    const SymbolizeOptions options_;
    const std::unique_ptr<DwflSettings> settings_; // libdwfl keeps pointers into it
    const size_t max_open_;
    const size_t max_cached_;

    mutable std::mutex mutex_;
    std::map<std::string, size_t> by_key_;
    std::vector<std::unique_ptr<Entry>> entries_;
    std::list<size_t> open_; // entries with an open session, most recently used first
    struct FrameKey {
        size_t entry;
        uint64_t address; // relative to the session's bias
        bool operator==(const FrameKey&) const = default;
    };
    struct FrameKeyHash {
        size_t operator()(const FrameKey& k) const {
            return std::hash<uint64_t>()(k.address * 0x9e3779b97f4a7c15ull ^ k.entry);
        }
    };
    // Module and address are left empty: each trace fills in its own.
    std::unordered_map<FrameKey, std::vector<Frame>, FrameKeyHash> frames_;
};

} // namespace gmt::analyzer::symbolize
