// The human-readable rendering of a report (the default on a terminal). It is made from
// the JSON report itself, so both formats always say the same thing.
#pragma once

#include "json.h"

#include <string>

namespace gmt::analyzer {

std::string renderText(const Json& report);

} // namespace gmt::analyzer
