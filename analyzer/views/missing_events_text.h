// What a trace is missing, in words shared by the text report and `check`'s verdict:
// how many ("3 sequence positions in 1 gap, 40 events dropped at unknown points") and
// where ("positions 2-4, after +11 ns, before +15 ns").
#pragma once

#include "model/report.h"

#include <string>

namespace gmt::analyzer {

std::string missingEventsText(const MissingEventsReport& missing);

// One gap; times relative to `origin_ns` (the report's start).
std::string gapText(const MissingRangeReport& gap, uint64_t origin_ns);

} // namespace gmt::analyzer
