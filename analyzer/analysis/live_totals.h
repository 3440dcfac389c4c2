// What the reading thread keeps of the live bytes while the accounting runs on a thread of
// its own (accounting_thread.h): the two things read during the pass rather than after it.
// One process's device-resident bytes, read at its Phase records; and the moment the live
// set stops being the peak's (the first decrease after a new maximum, or a gate before an
// end: live_accounting.h), when the analysis measures the peak's fragmentation from the
// lifetimes' own state, which only the reading thread may read. The same saturating steps
// on the same charges as the accounting's give the same levels and the same moment.
#pragma once

#include "analysis/charge.h"
#include "base/saturating.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace gmt::analyzer {

class LiveTotals {
  public:
    explicit LiveTotals(std::function<void(const PeakPoint&)> on_peak)
        : on_peak_(std::move(on_peak)) {}

    void add(const Charge& c, uint64_t time_ns) {
        if (!c.resident) {
            return;
        }
        if (c.process >= process_live_.size()) [[unlikely]] {
            process_live_.resize(size_t{c.process} + 1);
        }
        addSaturating(process_live_[c.process], c.bytes);
        addSaturating(total_, c.bytes);
        if (total_ > peak_.bytes) {
            peak_ = {total_, time_ns};
            pending_ = true;
        }
    }
    void remove(const Charge& c) {
        if (!c.resident) {
            return;
        }
        settle();
        if (c.process < process_live_.size()) {
            subtractSaturating(process_live_[c.process], c.bytes);
        }
        subtractSaturating(total_, c.bytes);
    }
    // Returns whether the peak's moment was pending (it is now past).
    bool settle() {
        if (!pending_) {
            return false;
        }
        pending_ = false;
        if (on_peak_) {
            on_peak_(peak_);
        }
        return true;
    }
    uint64_t processLive(uint32_t process) const {
        return process < process_live_.size() ? process_live_[process] : 0;
    }

  private:
    uint64_t total_ = 0;
    PeakPoint peak_;
    bool pending_ = false;
    std::vector<uint64_t> process_live_;
    std::function<void(const PeakPoint&)> on_peak_;
};

} // namespace gmt::analyzer
