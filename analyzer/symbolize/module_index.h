// Which recorded module covers an address. Modules get stable ids (their position in
// the order they were added) so per-module state elsewhere can be kept in a vector.
#pragma once

#include <gpumemtrace/trace_format.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace gmt::analyzer::symbolize {

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

} // namespace gmt::analyzer::symbolize
