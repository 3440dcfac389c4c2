#include "views/paused_text.h"

#include "base/human_time.h"
#include "base/plural.h"

namespace gmt::analyzer {

std::string pausedText(const PausedReport& p) {
    uint64_t pauses = 0;
    for (const RecordingChangeReport& c : p.changes) {
        pauses += c.change == "pause" ? 1 : 0;
    }
    std::string text =
        "recording paused " + plural(pauses, "time") + " for " + humanDuration(p.paused_ns);
    if (p.started_paused) {
        text += " (it started paused: GPUMEMTRACE_START=paused)";
    }
    if (p.paused_at_end) {
        text += ", paused now";
    }
    text += "; what the process did while paused is not in the trace";
    if (p.frees > 0) {
        text += "; " + plural(p.frees, "free") +
                " of memory allocated before recording started or while paused (not errors)";
    }
    return text;
}

} // namespace gmt::analyzer
