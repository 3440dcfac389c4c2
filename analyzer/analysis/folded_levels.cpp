#include "analysis/folded_levels.h"

#include <algorithm>

namespace gmt::analyzer {

void FoldedLevels::onMark(const format::FoldedMark& mark) {
    live_ += mark.level;
    pending_.insert(pending_.end(), mark.sites.begin(), mark.sites.end());
}

uint64_t FoldedLevels::atPhase(uint64_t time_ns) {
    phase_ns_ = time_ns;
    for (const format::FoldedSiteChange& c : pending_) {
        Site& s = sites_[c.stack];
        s.bytes += c.bytes;
        if (s.bytes > s.max_bytes) {
            s.max_bytes = s.bytes;
            ++s.new_maxima;
            s.last_max_ns = time_ns;
        }
    }
    pending_.clear();
    // A damaged trace's sums may go below nothing: they hold nothing then.
    return static_cast<uint64_t>(std::max<int64_t>(live_, 0));
}

std::vector<uint32_t> FoldedLevels::rising(uint64_t times, uint64_t since_ns) const {
    std::vector<uint32_t> out;
    for (const auto& [stack, s] : sites_) {
        if (s.new_maxima >= times && s.last_max_ns >= since_ns) {
            out.push_back(stack);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace gmt::analyzer
