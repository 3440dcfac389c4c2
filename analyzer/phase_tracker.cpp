#include "phase_tracker.h"

namespace gmt::analyzer {

void PhaseTracker::close(uint64_t time_ns) {
    if (current_ != kNoPhase) {
        phases_[current_].duration_ns += time_ns > current_start_ ? time_ns - current_start_ : 0;
    }
}

uint32_t PhaseTracker::mark(const std::string& name, uint64_t time_ns, uint64_t live_bytes) {
    close(time_ns);
    auto it = index_.find(name);
    if (it == index_.end()) {
        const bool full = index_.size() >= max_names_;
        const std::string& key = full ? std::string(kOtherPhases) : name;
        it = index_.find(key);
        if (it == index_.end()) {
            it = index_.emplace(key, static_cast<uint32_t>(phases_.size())).first;
            PhaseStats s;
            s.name = key;
            s.first_time_ns = time_ns;
            phases_.push_back(std::move(s));
        }
    }
    current_ = it->second;
    current_start_ = time_ns;
    PhaseStats& s = phases_[current_];
    ++s.occurrences;
    if (live_bytes > s.peak_bytes) {
        s.peak_bytes = live_bytes;
        s.peak_time_ns = time_ns;
    }
    return current_;
}

void PhaseTracker::end(uint64_t time_ns) {
    close(time_ns);
    current_ = kNoPhase;
}

} // namespace gmt::analyzer
