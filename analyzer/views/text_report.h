// The text report: what `gpumemtrace report` prints unless asked for JSON. A view of the
// typed Report, like the JSON, so both always say the same thing.
#pragma once

#include "model/report.h"
#include "views/styled_text.h"

#include <string>

namespace gmt::analyzer {

std::string renderText(const Report& report, const TextStyle& style = {});

// The per-rank table (report.h, RankRow) as `report` and `check` print it: nothing for
// fewer than two ranks.
void writeRankTable(StyledText& out, const std::vector<RankRow>& ranks);

} // namespace gmt::analyzer
