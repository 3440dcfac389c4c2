// `gpumemtrace diff`: what changed between two reports (peak per device and kind, leaks
// by allocation site, failures, errors) and which growth limits that breaks.
#pragma once

#include "model/report.h"
#include "views/styled_text.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gmt::cli {

struct DiffLimits {
    std::optional<double> max_peak_growth_pct; // any peak row (total, device, kind)
    std::optional<uint64_t> max_leak_growth;   // total leaked bytes, new minus base
};

struct DiffRow {
    std::string label;
    uint64_t base = 0;
    uint64_t now = 0;
    bool bytes = true; // false: a count
    bool over = false; // breaks a limit
};

struct ReportDiff {
    std::vector<DiffRow> peak;
    std::vector<DiffRow> leaks;  // total first, then sites by growth
    std::vector<DiffRow> counts; // failed allocations, errors
    std::vector<std::string> violations;
};

ReportDiff diffReports(const analyzer::Report& base, const analyzer::Report& now,
                       const DiffLimits& limits);

std::string renderDiff(const ReportDiff& diff, const std::string& base_name,
                       const std::string& new_name, const analyzer::TextStyle& style = {});

} // namespace gmt::cli
