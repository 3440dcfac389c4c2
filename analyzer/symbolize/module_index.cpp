#include "module_index.h"

namespace gmt::analyzer::symbolize {

namespace {
bool sameModule(const format::ModuleInfo& a, const format::ModuleInfo& b) {
    return a.base == b.base && a.start == b.start && a.end == b.end && a.path == b.path &&
           a.build_id == b.build_id;
}
} // namespace

std::optional<ModuleIndex::Added> ModuleIndex::add(const format::ModuleInfo& module) {
    if (module.end <= module.start) {
        return std::nullopt;
    }
    if (auto it = by_start_.find(module.start);
        it != by_start_.end() && sameModule(modules_[it->second], module)) {
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

std::optional<size_t> ModuleIndex::find(uint64_t address) const {
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

} // namespace gmt::analyzer::symbolize
