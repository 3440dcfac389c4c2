// The text report: what `gpumemtrace report` prints unless asked for JSON. A view of the
// typed Report, like the JSON, so both always say the same thing.
#pragma once

#include "report.h"
#include "styled_text.h"

#include <string>

namespace gmt::analyzer {

std::string renderText(const Report& report, const TextStyle& style = {});

} // namespace gmt::analyzer
