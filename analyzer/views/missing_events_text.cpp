#include "views/missing_events_text.h"

#include "base/human_time.h"

#include <vector>

namespace gmt::analyzer {

namespace {
std::string count(uint64_t n, const char* word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}
} // namespace

std::string missingEventsText(const MissingEventsReport& m) {
    std::vector<std::string> what;
    if (m.gap_count > 0) {
        what.push_back(count(m.missing_positions, "sequence position") + " in " +
                       count(m.gap_count, "gap"));
    }
    if (m.dropped_events > 0) {
        what.push_back(count(m.dropped_events, "event") + " dropped at unknown points");
    }
    if (m.unknown_tail) {
        what.push_back("an unknown number after the valid log");
    }
    if (m.unrecorded_frees > 0) {
        what.push_back(count(m.unrecorded_frees, "free") +
                       " not recorded (an allocation made over a live one)");
    }
    std::string out;
    for (const std::string& w : what) {
        out += (out.empty() ? "" : ", ") + w;
    }
    return out;
}

std::string gapText(const MissingRangeReport& g, uint64_t origin_ns) {
    std::string out = g.positions == 1 ? "position " + std::to_string(g.first_position)
                                       : "positions " + std::to_string(g.first_position) + "-" +
                                             std::to_string(g.first_position + g.positions - 1);
    // 0: no event before the gap / the slot after it is not an event (docs/analysis.md).
    if (g.after_time_ns != 0) {
        out += ", after " + relativeTime(g.after_time_ns, origin_ns);
    }
    if (g.before_time_ns != 0) {
        out += ", before " + relativeTime(g.before_time_ns, origin_ns);
    }
    return out;
}

} // namespace gmt::analyzer
