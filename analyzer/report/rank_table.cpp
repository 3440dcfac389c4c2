#include "report/rank_table.h"

#include <algorithm>
#include <tuple>

namespace gmt::analyzer {

namespace {

uint64_t lowerMedian(std::vector<uint64_t> values) {
    std::sort(values.begin(), values.end());
    return values[(values.size() - 1) / 2];
}

// Flags the rows whose `figure` is above the median by more than a tenth of it and by
// more than three median absolute deviations.
template <typename Get> void flag(std::vector<RankRow>& rows, const char* name, Get get) {
    std::vector<uint64_t> values;
    for (const RankRow& r : rows) {
        values.push_back(get(r));
    }
    const uint64_t median = lowerMedian(values);
    std::vector<uint64_t> deviations;
    for (uint64_t v : values) {
        deviations.push_back(v > median ? v - median : median - v);
    }
    const uint64_t mad = lowerMedian(deviations);
    const uint64_t margin = std::max(median / 10, 3 * mad);
    for (RankRow& r : rows) {
        if (get(r) > median && get(r) - median > margin) {
            r.outlier.push_back(name);
        }
    }
}

} // namespace

std::vector<RankRow> rankRows(const std::vector<const Report*>& reports) {
    std::vector<RankRow> rows;
    for (const Report* report : reports) {
        for (const ProcessReport& p : report->processes) {
            if (!p.rank) {
                continue;
            }
            RankRow row;
            row.rank = *p.rank;
            row.host = p.host;
            row.pid = p.pid;
            row.command = p.command;
            row.peak_bytes = p.peak_bytes;
            row.device_peaks = p.device_peaks;
            row.leaked_bytes = p.leaked_bytes;
            row.failed_allocations = p.failed_allocations;
            row.errors = p.errors;
            for (const IterationReport& it : report->iterations) {
                if (it.pid == p.pid) {
                    row.growth_bytes_per_iteration = it.growth_bytes_per_iteration;
                }
            }
            rows.push_back(std::move(row));
        }
    }
    std::sort(rows.begin(), rows.end(), [](const RankRow& a, const RankRow& b) {
        return std::tie(a.rank, a.host, a.pid) < std::tie(b.rank, b.host, b.pid);
    });
    if (rows.size() >= 2) { // one rank has nothing to stand out from
        flag(rows, "peak", [](const RankRow& r) { return r.peak_bytes; });
        flag(rows, "leaked", [](const RankRow& r) { return r.leaked_bytes; });
        flag(rows, "growth", [](const RankRow& r) { return r.growth_bytes_per_iteration; });
        flag(rows, "failed_allocations", [](const RankRow& r) { return r.failed_allocations; });
        flag(rows, "errors", [](const RankRow& r) { return r.errors; });
    }
    return rows;
}

} // namespace gmt::analyzer
