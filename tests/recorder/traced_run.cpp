#include "traced_run.h"

#include <catch2/catch.hpp>

namespace gmt::test {

Environment tracingEnvironment(const std::string& dir) {
    return {{"LD_PRELOAD", kPreload},
            {"LD_LIBRARY_PATH", kCudaSim},
            {"GPUMEMTRACE_OUTPUT", dir + "/t.%p.gmtrace"}};
}

Run traced(const std::vector<std::string>& argv, Environment extra) {
    Run run;
    Environment env = tracingEnvironment(run.dir.path());
    for (auto& kv : extra) {
        env.push_back(kv);
    }
    run.result = runProcess(argv, env);
    run.traces = listFiles(run.dir.path(), ".gmtrace");
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
