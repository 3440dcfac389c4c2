// Phase and NVTX range names given to the recorder on the program's own thread while that
// thread has no host memory to spare: a preloaded shim (programs/fail_thread_allocations.cpp,
// GMT_TEST_FAIL_THREAD=asking) fails every allocation of the thread in the stretch where
// programs/phase_names.cpp names its phases and ranges, from the n-th on. The recorder is
// built without exceptions: an allocation of its own that failed there would end the
// program. It must run exactly as untraced, and every name must be in the trace, but for a
// registered string the recorder had no room to keep, which names its ranges so.
#include "trace_dump.h"
#include "traced_run.h"

#include <catch2/catch.hpp>

using namespace gmt::test;
using nlohmann::json;

namespace {

const std::string kProgram = kPrograms + "/phase_names";
constexpr int kRounds = 50;
const std::string kNotKept = "(a registered NVTX string: not kept, out of host memory)";

FailingRun namesRun(long from) {
    return tracedOutOfMemory(
        {kProgram, std::to_string(kRounds)}, from,
        {{"NVTX_INJECTION64_PATH", kPreload}, {"GMT_TEST_FAIL_THREAD", "asking"}});
}

std::string numbered(const std::string& prefix, int n) {
    return prefix + std::to_string(n);
}

} // namespace

TEST_CASE("phase and NVTX range names while the program's thread is out of host memory: the "
          "program runs on, every name is in the trace",
          "[recorder][phases]") {
    const ProcessResult untraced =
        runProcess({kProgram, std::to_string(kRounds)}, {{"LD_LIBRARY_PATH", kCudaSim}});
    INFO(untraced.err);
    REQUIRE(untraced.exit_code == 0);

    long failed = 0;
    bool any_not_kept = false;
    for (long from : {0L, 1L, 2L, 3L, 5L, 10L, 40L, 100'000'000L}) {
        CAPTURE(from);
        const FailingRun o = namesRun(from);
        INFO(o.result.err);
        REQUIRE(o.result.exit_code == 0);
        REQUIRE(o.result.out == untraced.out);
        REQUIRE(o.failed >= 0);
        failed += o.failed;
        if (from == 100'000'000L) {
            REQUIRE(o.failed == 0); // memory enough
        }
        REQUIRE(o.traces.size() == 1);
        const DumpedTrace trace = dumpTrace(kCli, o.traces[0]);
        REQUIRE(trace.exit_code == 0);
        // Round 0 (before the stretch) and every round in it, each: a mark, then four ranges
        // pushed and popped.
        REQUIRE(trace.phases.size() == (kRounds + 1) * 9);
        const std::string wide = "a wide range, \u00e9t\u00e9 \u6771\u4eac \U0001F680, round ";
        for (int n = 0; n <= kRounds; ++n) {
            CAPTURE(n);
            const json* p = &trace.phases[static_cast<size_t>(n) * 9];
            CHECK(p[0]["kind"] == "mark");
            CHECK(p[0]["name"] ==
                  numbered("a phase named at more length than a string keeps inline, round ", n));
            const std::string pushed[] = {numbered("an ASCII range named at length, round ", n),
                                          numbered(wide, n), numbered(wide, n),
                                          numbered("a registered string, round ", n)};
            for (int r = 0; r < 4; ++r) {
                CAPTURE(r);
                CHECK(p[1 + 2 * r]["kind"] == "push");
                CHECK(p[2 + 2 * r]["kind"] == "pop");
                const std::string name = p[1 + 2 * r]["name"];
                if (r == 3 && name == kNotKept) {
                    CHECK(o.failed > 0); // only for want of memory
                    any_not_kept = true;
                } else {
                    CHECK(name == pushed[r]);
                }
            }
        }
    }
    REQUIRE(failed > 0);   // memory did run out in the stretch
    REQUIRE(any_not_kept); // and the names not kept say so
}
