#include "traced_run.h"

#include <fstream>

#include <catch2/catch.hpp>

namespace gmt::test {

Environment tracingEnvironment(const std::string& dir) {
    return {{"LD_PRELOAD", kPreload},
            {"LD_LIBRARY_PATH", kCudaSim},
            {"GPUMEMTRACE_OUTPUT", dir + "/t.%p.gmtrace"}};
}

namespace {

// Runs argv with `env`, then `extra`, and lists the traces it left.
void runInto(Run& run, const std::vector<std::string>& argv, Environment env,
             const Environment& extra) {
    env.insert(env.end(), extra.begin(), extra.end());
    run.result = runProcess(argv, env);
    run.traces = listFiles(run.dir.path(), ".gmtrace");
}

} // namespace

Run traced(const std::vector<std::string>& argv, Environment extra) {
    Run run;
    runInto(run, argv, tracingEnvironment(run.dir.path()), extra);
    return run;
}

FailingRun tracedOutOfMemory(const std::vector<std::string>& argv, long from, Environment extra) {
    FailingRun run;
    Environment env = tracingEnvironment(run.dir.path());
    for (auto& [key, value] : env) {
        if (key == "LD_PRELOAD") {
            value += " " + kPrograms + "/fail_thread_allocations.so";
        }
    }
    const std::string report = run.dir.file("failed");
    env.insert(env.end(),
               {{"GMT_TEST_FAIL_FROM", std::to_string(from)}, {"GMT_TEST_FAIL_REPORT", report}});
    runInto(run, argv, env, extra);
    std::ifstream(report) >> run.failed;
    return run;
}

DumpedTrace only(const Run& run) {
    REQUIRE(run.traces.size() == 1);
    DumpedTrace t = dumpTrace(kCli, run.traces[0]);
    INFO(t.error);
    REQUIRE(t.exit_code == 0);
    return t;
}

} // namespace gmt::test
