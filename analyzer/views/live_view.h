// One frame of `gpumemtrace top` (docs/live.md): per traced process, whether it still
// runs, its live and peak bytes per device against the device's memory, the sites holding
// the most live bytes (labelled by the user's own line, as every view labels a site), its
// growth per iteration so far, and its latest failed allocations and errors. Made from
// snapshot reports (Report::snapshot), one per trace, so that a trace that cannot be read
// this time shows as a line and the others still show.
#pragma once

#include "model/report.h"
#include "views/styled_text.h"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gmt::analyzer {

struct LiveSource {
    std::string name;               // the trace, as given or found
    const Report* report = nullptr; // null: `error` says why
    std::string error;
};

// Live bytes per (pid, stack id): what the next frame compares against ("+1.00 MiB").
using LiveSiteBytes = std::map<std::pair<uint64_t, uint64_t>, uint64_t>;

struct LiveViewOptions {
    uint64_t now_wall_ns = 0;
    std::string refresh; // "every 1 s"; empty: a single frame
    size_t sites = 10;   // sites listed per process
    size_t recent = 3;   // failed allocations and errors listed per process
};

// The frame as text; `current` gets this frame's site bytes, `previous` (may be null) is the
// last frame's.
std::string renderLiveView(const std::vector<LiveSource>& sources, const LiveViewOptions& options,
                           const LiveSiteBytes* previous, LiveSiteBytes& current,
                           const TextStyle& style);

} // namespace gmt::analyzer
