// The per-rank table's outlier rule (analyzer/report/rank_table.h): the rank above the others
// stands out; ranks that are alike, or differ evenly, do not.
#include "report/rank_table.h"

#include <catch2/catch.hpp>

using namespace gmt::analyzer;

namespace {

Report job(const std::vector<uint64_t>& peaks, const std::vector<uint64_t>& leaks) {
    Report r;
    for (size_t i = 0; i < peaks.size(); ++i) {
        ProcessReport p;
        p.pid = 100 + i;
        p.rank = static_cast<int64_t>(peaks.size() - 1 - i); // listed in reverse
        p.host = "node" + std::to_string(i / 4);
        p.peak_bytes = peaks[i];
        p.device_peaks = {{static_cast<int64_t>(i % 4), peaks[i]}};
        p.leaked_bytes = leaks[i];
        r.processes.push_back(p);
        r.iterations.push_back(IterationReport{p.pid, "phase", "step", {}, 0, 50, "", 0, 0});
    }
    return r;
}

std::vector<int64_t> outliers(const std::vector<RankRow>& rows, const std::string& figure) {
    std::vector<int64_t> out;
    for (const RankRow& r : rows) {
        if (std::find(r.outlier.begin(), r.outlier.end(), figure) != r.outlier.end()) {
            out.push_back(r.rank);
        }
    }
    return out;
}

} // namespace

TEST_CASE("rank table: rows by rank - each rank's own figures") {
    Report r = job({40, 41, 39, 40}, {0, 0, 0, 0});
    r.iterations[1].growth_bytes_per_iteration = 7; // pid 101, rank 2
    ProcessReport unranked;
    unranked.pid = 999;
    r.processes.push_back(unranked); // not a rank: not in the table
    const auto rows = rankRows({&r});
    REQUIRE(rows.size() == 4);
    CHECK(rows[0].rank == 0);
    CHECK(rows[0].pid == 103);
    CHECK(rows[3].rank == 3);
    CHECK(rows[2].growth_bytes_per_iteration == 7);
    CHECK(rows[0].device_peaks == std::vector<std::pair<int64_t, uint64_t>>{{3, 40}});
    CHECK(outliers(rows, "peak").empty()); // 39..41: alike
}

TEST_CASE("rank table: the one rank that leaks or peaks higher stands out") {
    // 8 ranks around 40 GiB, one at 60: only it. One leaking rank of two: only it.
    Report eight = job({40, 41, 40, 39, 60, 40, 41, 40}, {0, 0, 0, 0, 0, 0, 0, 0});
    CHECK(outliers(rankRows({&eight}), "peak") == std::vector<int64_t>{3});
    Report two = job({40, 40}, {0, 64});
    CHECK(outliers(rankRows({&two}), "leaked") == std::vector<int64_t>{0});
    CHECK(outliers(rankRows({&two}), "peak").empty());
    // Evenly spread peaks (a pipeline's stages): no one stands out.
    Report spread = job({10, 20, 30, 40, 50, 60}, {0, 0, 0, 0, 0, 0});
    CHECK(outliers(rankRows({&spread}), "peak").empty());
    // One rank alone has nothing to stand out from.
    Report one = job({40}, {64});
    CHECK(rankRows({&one})[0].outlier.empty());
}

TEST_CASE("rank table: from many reports of one process each") {
    Report a = job({40}, {0}), b = job({80}, {0}), c = job({40}, {0});
    b.processes[0].rank = 1;
    c.processes[0].rank = 2;
    const auto rows = rankRows({&a, &b, &c});
    REQUIRE(rows.size() == 3);
    CHECK(outliers(rows, "peak") == std::vector<int64_t>{1});
}
