// The recorder out of host memory where its tables grow with the traced program: an
// aggregated trace's, kept by the writer thread (preload/aggregator.h). A preloaded shim
// (programs/fail_thread_allocations.cpp) fails every allocation of that thread from the
// n-th on, as an exhausted host does. The program must run exactly as untraced; the trace
// must stop there and say why, and every call after it counts as dropped.
#include "traced_run.h"

#include <catch2/catch.hpp>

using namespace gmt::test;
using nlohmann::json;

namespace {

const std::string kStory = kPrograms + "/aggregate_story";

// The story, aggregated, the writer thread's allocations failing from the `from`-th on.
// The ring is large enough that no application thread ever drains it: every fold until the
// trace ends is the writer thread's (recorder.cpp, endTrace: its last drain too).
FailingRun storyRun(long from) {
    return tracedOutOfMemory(
        {kStory, "story"}, from,
        {{"GPUMEMTRACE_MODE", "aggregate"}, {"GPUMEMTRACE_BUFFER_SIZE", "64M"}});
}

json reportOf(const std::string& trace) {
    ProcessResult r = runProcess({kCli, "report", "--no-symbols", "--format", "json", trace});
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out);
}

} // namespace

TEST_CASE("aggregate mode out of host memory: the program runs on, the trace stops and says why",
          "[recorder][aggregate]") {
    const ProcessResult untraced = runProcess({kStory, "story"}, {{"LD_LIBRARY_PATH", kCudaSim}});
    REQUIRE(untraced.exit_code == 0);

    // Memory enough: the shim fails nothing, the trace is whole.
    const FailingRun whole = storyRun(100'000'000);
    INFO(whole.result.err);
    REQUIRE(whole.failed == 0);
    REQUIRE(whole.traces.size() == 1);
    const json reference = reportOf(whole.traces[0]);
    REQUIRE(reference["processes"][0]["complete"] == true);
    const uint64_t events = reference["processes"][0]["aggregate"]["events"];
    REQUIRE(events > 30000);

    // The writer thread's first allocations one by one, then further apart (it makes a few
    // thousand in the story): the first failure falls in its event fold, its phase records
    // or a checkpoint.
    for (long from : {0L, 1L, 2L, 3L, 5L, 10L, 30L, 100L, 300L, 1000L, 3000L}) {
        CAPTURE(from);
        const FailingRun o = storyRun(from);
        INFO(o.result.err);
        // What the program sees: nothing changed, no abort.
        CHECK(o.result.term_signal == 0);
        CHECK(o.result.exit_code == untraced.exit_code);
        CHECK(o.result.out == untraced.out);
        // The writer thread runs its last drain at the latest when the trace ends: each of
        // these first failures happens.
        CHECK(o.failed > 0);
        CHECK(o.result.err.find("out of host memory for the aggregated trace; tracing stops "
                                "here") != std::string::npos);
        REQUIRE(o.traces.size() == 1);

        const json r = reportOf(o.traces[0]);
        const json& p = r["processes"][0];
        CHECK(p["complete"] == false);
        CHECK(p["log_failed"] == true);
        CHECK(p["incomplete_reason"] ==
              "the recorder ran out of host memory for the aggregated trace and stopped "
              "tracing");
        // Nothing lost silently: each call is in the trace (a checkpoint's fold, the ring
        // after it) or counted as dropped.
        const uint64_t folded =
            p.contains("aggregate") ? p["aggregate"]["events"].get<uint64_t>() : 0;
        const uint64_t read = p["events"];
        const uint64_t dropped = p["dropped_events"];
        CHECK(folded + read + dropped >= events);
        CHECK(folded + read <= events);

        // No gate passes on it.
        ProcessResult check = runProcess({kCli, "check", "--no-symbols", o.traces[0]});
        CHECK(check.exit_code == 1);
        CHECK(check.out.find("the recorder ran out of host memory") != std::string::npos);
    }
}
