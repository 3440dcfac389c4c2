#include "analysis/growth_tracker.h"

#include "base/saturating.h"

#include <algorithm>

namespace gmt::analyzer {

void GrowthTracker::follow(const std::vector<uint32_t>& stacks) {
    filtered_ = true;
    for (uint32_t stack : stacks) {
        followed_[stack] = true;
    }
}

// Accounts for the boundaries since the site last changed: it held `value` at each of
// them, so only the first can differ from the boundary before; the rest are flat.
void GrowthTracker::catchUp(Site& s) const {
    if (s.seen >= boundaries_) {
        return;
    }
    const uint64_t k = s.seen;
    if (k > 0) {
        if (s.value > s.at_boundary) {
            if (s.first_growth == 0) {
                s.first_growth = k;
                s.base = s.at_boundary;
                s.growth_phase = s.last_phase;
            }
            ++s.growths;
        } else if (s.value < s.at_boundary) {
            s.first_growth = 0; // it shrank: a new run begins
            s.growths = 0;
        }
    }
    s.at_boundary = s.value;
    s.seen = boundaries_;
}

void GrowthTracker::change(uint32_t stack, uint64_t bytes, bool added, uint32_t phase) {
    if (added && clock_stack_ && stack == *clock_stack_) {
        boundary();
    }
    if (filtered_ && !followed_.contains(stack)) {
        return;
    }
    auto [index, inserted] = index_.tryEmplace(stack);
    if (inserted) {
        *index = static_cast<uint32_t>(sites_.size());
        sites_.push_back(Site{});
        sites_.back().stack = stack;
    }
    Site& s = sites_[*index];
    catchUp(s);
    if (added) {
        addSaturating(s.value, bytes);
        s.last_phase = phase;
    } else {
        subtractSaturating(s.value, bytes);
    }
}

std::vector<GrowthSiteResult> GrowthTracker::finish() {
    std::vector<GrowthSiteResult> out;
    for (Site& s : sites_) {
        catchUp(s);
        if (s.first_growth == 0 || s.growths < kMinGrowingIterations) {
            continue;
        }
        GrowthSiteResult r;
        r.stack = s.stack;
        r.first_iteration = s.first_growth;
        r.iterations = boundaries_ - s.first_growth; // boundaries first_growth..last
        r.growing_iterations = s.growths;
        r.bytes_per_iteration = (s.at_boundary - std::min(s.at_boundary, s.base)) / r.iterations;
        r.confidence = static_cast<double>(s.growths + 1) / static_cast<double>(r.iterations + 2);
        r.live_bytes = s.at_boundary;
        r.phase = s.growth_phase;
        if (r.bytes_per_iteration > 0 && r.confidence >= kMinGrowthConfidence) {
            out.push_back(r);
        }
    }
    std::sort(out.begin(), out.end(), [](const GrowthSiteResult& a, const GrowthSiteResult& b) {
        return a.bytes_per_iteration != b.bytes_per_iteration
                   ? a.bytes_per_iteration > b.bytes_per_iteration
                   : a.stack < b.stack;
    });
    return out;
}

} // namespace gmt::analyzer
