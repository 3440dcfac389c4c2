// `gpumemtrace diff --format json`: the comparison as JSON (docs/diff.schema.json). A view
// of the same ReportDiff rows the text shows, one entry per pair of processes compared
// (one pair for two single runs; a job's ranks matched by rank and command).
#pragma once

#include "base/json.h"
#include "diff/report_diff.h"

#include <string>
#include <vector>

namespace gmt::cli {

inline constexpr int kDiffSchemaVersion = 1;

struct DiffPair {
    std::string name; // "" for two single runs; else the command and rank
    uint64_t base_pid = 0;
    uint64_t new_pid = 0;
    ReportDiff diff;
};

analyzer::Json diffJson(const std::string& base, const std::string& now,
                        const std::vector<DiffPair>& pairs,
                        const std::vector<std::string>& only_in_base,
                        const std::vector<std::string>& only_in_new);

} // namespace gmt::cli
