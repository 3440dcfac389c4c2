#include "analysis/phase_tracker.h"

#include "base/saturating.h"

#include <algorithm>
#include <cstring>

namespace gmt::analyzer {

using format::PhaseKind;

uint32_t PhaseTracker::intern(uint32_t parent, const std::string& name, uint64_t time_ns) {
    std::string key(sizeof parent, '\0');
    std::memcpy(key.data(), &parent, sizeof parent);
    key += name;
    auto it = index_.find(key);
    if (it == index_.end()) {
        const bool kept = (kept_name_ && name == *kept_name_) ||
                          (parent != kNoPhase && parent < kept_.size() && kept_[parent]);
        if (index_.size() >= max_names_ && !kept) {
            parent = kNoPhase;
            key.assign(sizeof parent, '\0');
            std::memcpy(key.data(), &parent, sizeof parent);
            key += kOtherPhases;
            it = index_.find(key);
        }
        if (it == index_.end()) {
            it = index_.emplace(key, static_cast<uint32_t>(phases_.size())).first;
            PhaseStats s;
            s.name = key.substr(sizeof parent);
            s.parent = parent;
            s.depth = parent == kNoPhase ? 0 : phases_[parent].depth + 1;
            s.first_time_ns = time_ns;
            phases_.push_back(std::move(s));
            kept_.push_back(kept); // kOtherPhases never is
        }
    }
    return it->second;
}

PhaseTracker::Open PhaseTracker::begin(uint32_t phase, uint64_t time_ns, uint64_t live_bytes) {
    PhaseStats& s = phases_[phase];
    ++s.occurrences;
    s.last_time_ns = time_ns;
    if (live_bytes > s.peak_bytes) {
        s.peak_bytes = live_bytes;
        s.peak_time_ns = time_ns;
    }
    return Open{phase, time_ns, live_bytes};
}

void PhaseTracker::close(Open& open, uint64_t time_ns) {
    if (open.phase != kNoPhase) {
        phases_[open.phase].duration_ns += time_ns > open.start_ns ? time_ns - open.start_ns : 0;
        open.phase = kNoPhase;
    }
}

uint32_t PhaseTracker::innermost(const std::vector<Level>& stack) const {
    if (stack.empty()) {
        return base_.marked.phase;
    }
    const Level& top = stack.back();
    return top.marked.phase != kNoPhase ? top.marked.phase : top.pushed.phase;
}

uint32_t PhaseTracker::onPhase(const format::PhaseInfo& p, uint64_t live_bytes) {
    std::vector<Level>& stack = threads_[p.tid];
    active_tid_ = p.tid;
    switch (p.kind) {
    case PhaseKind::Mark: {
        Level& level = stack.empty() ? base_ : stack.back();
        close(level.marked, p.time_ns);
        const uint32_t phase = intern(level.pushed.phase, p.name, p.time_ns);
        level.marked = begin(phase, p.time_ns, live_bytes);
        record_phase_ = phase;
        break;
    }
    case PhaseKind::Push: {
        const uint32_t phase = intern(innermost(stack), p.name, p.time_ns);
        Level level;
        level.pushed = begin(phase, p.time_ns, live_bytes);
        stack.push_back(level);
        record_phase_ = phase;
        break;
    }
    case PhaseKind::Pop:
        record_phase_ = stack.empty() ? kNoPhase : stack.back().pushed.phase;
        if (!stack.empty()) { // a pop with nothing pushed changes nothing
            close(stack.back().marked, p.time_ns);
            close(stack.back().pushed, p.time_ns);
            stack.pop_back();
        }
        break;
    }
    current_ = innermost(stack);
    return current_;
}

void PhaseTracker::touch(const Open& open, uint64_t time_ns, uint64_t live_bytes) {
    if (open.phase == kNoPhase) {
        return;
    }
    PhaseStats& s = phases_[open.phase];
    if (live_bytes > s.peak_bytes) {
        s.peak_bytes = live_bytes;
        s.peak_time_ns = time_ns;
    }
    if (live_bytes > open.start_live && live_bytes - open.start_live > s.peak_above_start_bytes) {
        s.peak_above_start_bytes = live_bytes - open.start_live;
        s.peak_above_start_time_ns = time_ns;
    }
}

void PhaseTracker::onEvent(uint64_t time_ns, uint64_t live_bytes, uint64_t allocations,
                           uint64_t allocated_bytes, uint64_t frees) {
    if (current_ == kNoPhase) {
        return;
    }
    PhaseStats& s = phases_[current_];
    s.allocations += allocations;
    addSaturating(s.allocated_bytes, allocated_bytes);
    s.frees += frees;
    // The current phase and every phase it is nested in: the open levels of the thread
    // that made it current, innermost first, then the base level.
    auto it = threads_.find(active_tid_);
    if (it != threads_.end()) {
        for (auto level = it->second.rbegin(); level != it->second.rend(); ++level) {
            touch(level->marked, time_ns, live_bytes);
            touch(level->pushed, time_ns, live_bytes);
        }
    }
    touch(base_.marked, time_ns, live_bytes);
}

void PhaseTracker::end(uint64_t time_ns) {
    for (auto& [tid, stack] : threads_) {
        for (Level& level : stack) {
            close(level.marked, time_ns);
            close(level.pushed, time_ns);
        }
        stack.clear();
    }
    close(base_.marked, time_ns);
    current_ = kNoPhase;
}

bool PhaseTracker::within(uint32_t phase, uint32_t ancestor) const {
    for (; phase != kNoPhase && phase < phases_.size(); phase = phases_[phase].parent) {
        if (phase == ancestor) {
            return true;
        }
    }
    return false;
}

std::vector<std::string> PhaseTracker::path(uint32_t phase) const {
    std::vector<std::string> names;
    for (; phase != kNoPhase && phase < phases_.size(); phase = phases_[phase].parent) {
        names.push_back(phases_[phase].name);
    }
    std::reverse(names.begin(), names.end());
    return names;
}

} // namespace gmt::analyzer
