// One line on what pausing the recording (GPUMEMTRACE_START=paused, `gpumemtrace control`)
// left out of a process's figures: the text report and `top` say it alike.
#pragma once

#include "model/report.h"

#include <string>

namespace gmt::analyzer {

// "recording paused 2 times for 3.20 s (...); what the process did while paused is not in
// the trace; 4 frees of memory allocated before recording started or while paused (not
// errors)".
std::string pausedText(const PausedReport& paused);

} // namespace gmt::analyzer
