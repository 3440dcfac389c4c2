// The per-rank table of a job's traces: one row per process that has a rank (from its
// launcher's environment), with its own figures, and the ranks that stand out flagged by
// the rule report.h states at RankRow. Built from one report of many processes or from
// many reports of one process each (check, diff: analysed one by one).
#pragma once

#include "model/report.h"

#include <vector>

namespace gmt::analyzer {

std::vector<RankRow> rankRows(const std::vector<const Report*>& reports);

} // namespace gmt::analyzer
