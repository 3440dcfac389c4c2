// Which recorded module covers an address. Modules get stable ids (their position in
// the order they were added) so per-module state elsewhere can be kept in a vector.
// Adding and finding are O(log modules): a trace may name millions of modules (every
// dlopen of a plugin). Header-only: both symbolizers (symbolizer.h and the libdw one in
// symbolize/, a separate library) use it.
#pragma once

#include <gpumemtrace/format/records.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace gmt::analyzer {

class ModuleIndex {
  public:
    struct Added {
        size_t id;
        bool is_new; // false: the very same module was already known (same id returned)
    };

    // A module overlapping earlier ones replaces them: they were unloaded (dlclose) and
    // their range reused. Empty ranges cannot cover anything and are refused.
    std::optional<Added> add(const format::ModuleInfo& module);

    std::optional<size_t> find(uint64_t address) const;

    const format::ModuleInfo& module(size_t id) const { return modules_[id]; }

  private:
    std::vector<format::ModuleInfo> modules_; // by id; replaced ones stay for their id
    std::map<uint64_t, size_t> by_start_;     // live modules only, never overlapping
};

namespace detail {
inline bool sameModule(const format::ModuleInfo& a, const format::ModuleInfo& b) {
    return a.base == b.base && a.start == b.start && a.end == b.end && a.path == b.path &&
           a.build_id == b.build_id;
}
} // namespace detail

inline std::optional<ModuleIndex::Added> ModuleIndex::add(const format::ModuleInfo& module) {
    if (module.end <= module.start) {
        return std::nullopt;
    }
    if (auto it = by_start_.find(module.start);
        it != by_start_.end() && detail::sameModule(modules_[it->second], module)) {
        return Added{it->second, false};
    }
    // Live modules never overlap, so only the one starting before `module.start` can reach
    // into the new range from below; every later one up to `module.end` starts inside it.
    auto it = by_start_.upper_bound(module.start);
    if (it != by_start_.begin() && modules_[std::prev(it)->second].end > module.start) {
        --it;
    }
    while (it != by_start_.end() && it->first < module.end) {
        it = by_start_.erase(it);
    }
    size_t id = modules_.size();
    modules_.push_back(module);
    by_start_.emplace(module.start, id);
    return Added{id, true};
}

inline std::optional<size_t> ModuleIndex::find(uint64_t address) const {
    auto it = by_start_.upper_bound(address);
    if (it == by_start_.begin()) {
        return std::nullopt;
    }
    --it;
    if (address >= modules_[it->second].end) {
        return std::nullopt;
    }
    return it->second;
}

} // namespace gmt::analyzer
