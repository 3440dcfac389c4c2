// The aggregated recording mode (GPUMEMTRACE_MODE=aggregate, format/aggregate.h): the same
// run recorded in full and aggregated must report the same leaks, peak and its holders,
// growth, phases and failures; a long run stays within the budget; a killed run keeps its leaks up
// to the last checkpoint and the ring; `check` reads it unchanged.
#include "traced_run.h"

#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <sys/stat.h>

#include <gpumemtrace/format/aggregate.h>
#include <gpumemtrace/format/file_layout.h>

using namespace gmt::test;
using nlohmann::json;

namespace {

const std::string kStory = kPrograms + "/aggregate_story";

json reportOf(const std::string& trace) {
    ProcessResult r = runProcess({kCli, "report", "--no-symbols", "--format", "json", trace});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out);
}

// A stack as the offsets of its frames in their modules: the same in two runs of one
// program (addresses move with ASLR).
json offsets(const json& stack) {
    json out = json::array();
    for (const json& f : stack) {
        out.push_back(f["offset"]);
    }
    return out;
}

// The figures both modes must agree on, without times and addresses.
json figures(const json& r) {
    json f;
    f["summary"] = r["summary"];
    f["summary"].erase("peak_time_ns");
    for (const json& l : r["leaks"]) {
        f["leaks"].push_back({l["bytes"], l["allocations"], l["kind"], offsets(l["stack"])});
    }
    f["peak_bytes"] = r["peak"]["bytes"];
    for (const json& s : r["peak"]["top_sites"]) {
        f["peak_holders"].push_back({s["bytes"], s["allocations"], offsets(s["stack"])});
    }
    for (const json& g : r["growth"]) {
        f["growth"].push_back({g["bytes_per_iteration"], g["first_iteration"], g["iterations"],
                               g["growing_iterations"], g["live_bytes"], g["confidence"],
                               offsets(g["stack"])});
    }
    for (const json& x : r["failures"]) {
        f["failures"].push_back({x["requested_bytes"], x["error"], x["live_bytes"],
                                 x["largest_hole_bytes"], offsets(x["stack"])});
    }
    for (const json& p : r["phases"]) {
        f["phases"].push_back({p["name"], p["occurrences"], p["allocations"], p["allocated_bytes"],
                               p["frees"], p["peak_bytes"], p["leaked_bytes"],
                               p["peak_above_start_bytes"]});
    }
    for (const json& e : r["errors"]) {
        f["errors"].push_back(e["type"]);
    }
    f["allocations"] = r["processes"][0]["allocations"];
    f["frees"] = r["processes"][0]["frees"];
    return f;
}

uint64_t diskBytes(const std::string& path) {
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return static_cast<uint64_t>(st.st_blocks) * 512;
}

} // namespace

TEST_CASE("aggregate mode: leaks, peak, growth and failures as in a full trace",
          "[recorder][aggregate]") {
    Run full = traced({kStory, "story"});
    Run aggregated = traced({kStory, "story"}, {{"GPUMEMTRACE_MODE", "aggregate"}});
    INFO(full.result.err << aggregated.result.err);
    REQUIRE(full.result.exit_code == 0);
    REQUIRE(aggregated.result.exit_code == 0);
    REQUIRE(aggregated.traces.size() == 1);

    const json f = reportOf(full.traces[0]);
    const json a = reportOf(aggregated.traces[0]);
    CHECK(figures(a) == figures(f));
    // The story has all of them, so the comparison compares something.
    CHECK(a["leaks"].size() == 4);
    CHECK(a["growth"].size() == 1);
    CHECK(a["phases"].size() == 2);
    CHECK(a["failures"].size() == 3);
    CHECK(a["peak"]["bytes"].get<uint64_t>() >= (256u << 20) + (9u << 20));
    CHECK(f["processes"][0].count("aggregate") == 0);
    const json& agg = a["processes"][0]["aggregate"];
    CHECK(agg["events"] == f["processes"][0]["events"]);
    CHECK(agg["folded_allocations"] > 17000);
    CHECK(agg["kept_events"] < 100);
    CHECK(agg["over_budget"] == 0);
    CHECK(a["processes"][0]["complete"] == true);

    // `check` gives the same verdict on both.
    ProcessResult cf = runProcess({kCli, "check", "--no-symbols", full.traces[0]});
    ProcessResult ca = runProcess({kCli, "check", "--no-symbols", aggregated.traces[0]});
    CHECK(ca.exit_code == cf.exit_code);
    CHECK(ca.exit_code != 0); // it leaks

    // The text report says what the mode gives up.
    ProcessResult text = runProcess({kCli, "report", "--no-symbols", aggregated.traces[0]});
    CHECK(text.out.find("AGGREGATED trace") != std::string::npos);
    CHECK(text.out.find("No event-level timeline") != std::string::npos);
}

TEST_CASE("aggregate mode: a server marking every request a phase keeps no more as it runs",
          "[recorder][aggregate]") {
    // Each request's output is live at the next mark, the cache grows from the middle on
    // (all its entries folded: growth comes from what the trace says they held at the
    // marks), an answer leaks every 1000th request.
    Run full = traced({kStory, "server", "3000"});
    Run aggregated = traced({kStory, "server", "3000"}, {{"GPUMEMTRACE_MODE", "aggregate"}});
    INFO(full.result.err << aggregated.result.err);
    REQUIRE(full.result.exit_code == 0);
    REQUIRE(aggregated.result.exit_code == 0);
    const json f = reportOf(full.traces[0]);
    const json a = reportOf(aggregated.traces[0]);
    CHECK(figures(a) == figures(f));
    CHECK(a["growth"].size() == 1);
    CHECK(a["leaks"].size() == 1);
    CHECK(a["summary"]["leaked_allocations"] == 3);
    CHECK(a["phases"].size() == 2);
    CHECK(a["phases"][0]["peak_above_start_bytes"].get<uint64_t>() >= (256u << 20));
    const json& small = a["processes"][0]["aggregate"];
    CHECK(small["over_budget"] == 0);

    // Ten times the requests: the kept events grow by the leaks only (one each), the trace
    // by what each Phase record costs (a few tens of bytes), not by what was live at it.
    Run longer = traced({kStory, "server", "30000"}, {{"GPUMEMTRACE_MODE", "aggregate"},
                                                      {"GPUMEMTRACE_AGGREGATE_BUDGET", "8M"}});
    REQUIRE(longer.result.exit_code == 0);
    const json l = reportOf(longer.traces[0]);
    const json& large = l["processes"][0]["aggregate"];
    CHECK(large["over_budget"] == 0);
    CHECK(l["summary"]["leaked_allocations"] == 30);
    CHECK(large["kept_events"].get<uint64_t>() <= small["kept_events"].get<uint64_t>() + 27 + 16);
    CHECK(l["growth"].size() == 1);
    // Prologue, the default ring, the written parts of both regions, the definitions: a
    // region holds 30 000 marks in at most 64 bytes each.
    CHECK(diskBytes(longer.traces[0]) <= 4096 + (1u << 20) + 2 * 30000 * 64 + (256u << 10));
}

TEST_CASE("aggregate mode: 10 million events stay within the budget", "[recorder][aggregate]") {
    constexpr long kEvents = 10'000'000;
    Run run = traced({kStory, "loop", std::to_string(kEvents)},
                     {{"GPUMEMTRACE_MODE", "aggregate"}, {"GPUMEMTRACE_AGGREGATE_BUDGET", "1M"}});
    INFO(run.result.err);
    REQUIRE(run.result.exit_code == 0);
    REQUIRE(run.traces.size() == 1);
    // Prologue, the 1 MiB ring, the two 512 KiB regions and the definitions' log.
    std::ifstream in(run.traces[0], std::ios::binary | std::ios::ate);
    const uint64_t size = static_cast<uint64_t>(in.tellg());
    CHECK(size <= 4096 + (1u << 20) + (1u << 20) + (64u << 10));
    CHECK(diskBytes(run.traces[0]) <= 4096 + (1u << 20) + (1u << 20) + (64u << 10));
    const json r = reportOf(run.traces[0]);
    CHECK(r["processes"][0]["aggregate"]["events"] == kEvents);
    CHECK(r["summary"]["allocations"] == kEvents / 2);
    CHECK(r["summary"]["frees"] == kEvents / 2);
    CHECK(r["summary"]["leaked_bytes"] == 0);
    CHECK(r["processes"][0]["complete"] == true);
}

TEST_CASE("aggregate mode: a killed run keeps its leaks (last checkpoint and ring)",
          "[recorder][aggregate]") {
    Run run = traced({kStory, "killed", "400000"}, {{"GPUMEMTRACE_MODE", "aggregate"}});
    REQUIRE(run.result.term_signal == SIGKILL);
    REQUIRE(run.traces.size() == 1);
    json r = reportOf(run.traces[0]);
    CHECK(r["processes"][0]["complete"] == false);
    CHECK(r["summary"]["leaked_bytes"] == (3u << 20) + (5u << 20));
    CHECK(r["summary"]["leaked_allocations"] == 2);
    CHECK(r["summary"]["allocations"] == 200000 + 2);
    ProcessResult check = runProcess({kCli, "check", "--no-symbols", run.traces[0]});
    CHECK(check.exit_code == 1);

    // A checkpoint torn by the kill: the reader falls back to the other one. Tear the newer.
    std::fstream f(run.traces[0], std::ios::in | std::ios::out | std::ios::binary);
    gmt::format::Prologue p{};
    f.read(reinterpret_cast<char*>(&p), sizeof p);
    CHECK((p.flags & gmt::format::kPrologueAggregated) != 0);
    const uint64_t ring_end = p.ring_offset + uint64_t{p.ring_slots} * p.slot_size;
    const uint64_t region = (p.log_offset - ring_end) / 2;
    gmt::format::CheckpointHeader h[2]{};
    for (int i = 0; i < 2; ++i) {
        f.seekg(static_cast<std::streamoff>(ring_end + i * region));
        f.read(reinterpret_cast<char*>(&h[i]), sizeof h[i]);
    }
    const int newer = h[1].sequence > h[0].sequence ? 1 : 0;
    REQUIRE(h[newer].sequence > 1);
    f.seekp(static_cast<std::streamoff>(ring_end + newer * region + sizeof h[0]));
    f.put('\xff');
    f.close();
    r = reportOf(run.traces[0]);
    CHECK(r["summary"]["leaked_bytes"].get<uint64_t>() >= (3u << 20)); // the first leak stays
}

TEST_CASE("aggregate mode: a live set larger than the budget is said, never silently cut",
          "[recorder][aggregate]") {
    Run run = traced({kStory, "leaks", "50000"},
                     {{"GPUMEMTRACE_MODE", "aggregate"}, {"GPUMEMTRACE_AGGREGATE_BUDGET", "128K"}});
    INFO(run.result.err);
    REQUIRE(run.result.exit_code == 0);
    REQUIRE(run.traces.size() == 1);
    const json r = reportOf(run.traces[0]);
    const json& agg = r["processes"][0]["aggregate"];
    CHECK(agg["budget_bytes"] == 64 * 1024);
    CHECK(agg["over_budget"] > 0);
    CHECK(agg["over_budget"].get<uint64_t>() + r["summary"]["leaked_allocations"].get<uint64_t>() ==
          50000);
    ProcessResult text = runProcess({kCli, "report", "--no-symbols", run.traces[0]});
    CHECK(text.out.find("OVER BUDGET") != std::string::npos);
}

TEST_CASE("record --aggregate sets the mode", "[recorder][aggregate]") {
    TempDir dir;
    ProcessResult r = runProcess({kCli, "record", "--aggregate", "--library", kPreload, "-o",
                                  dir.path() + "/r.%p.gmtrace", "--", kStory, "loop", "1000"},
                                 {{"LD_LIBRARY_PATH", kCudaSim}});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const std::vector<std::string> traces = listFiles(dir.path(), ".gmtrace");
    REQUIRE(traces.size() == 1);
    const json report = reportOf(traces[0]);
    CHECK(report["processes"][0]["aggregate"]["events"] == 1000);
}
