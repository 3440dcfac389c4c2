// Running a test program under the recorder: the library preloaded, the simulated CUDA,
// the traces written to a private folder.
#pragma once

#include "subprocess.h"
#include "temp_dir.h"
#include "trace_dump.h"

#include <string>
#include <vector>

namespace gmt::test {

inline const std::string kBin = GMT_BUILD_DIR "/bin";
inline const std::string kCli = kBin + "/gpumemtrace";
inline const std::string kPrograms = GMT_PROGRAM_DIR;
inline const std::string kPreload = GMT_BUILD_DIR "/lib/libgpumemtrace.so";
inline const std::string kCudaSim = GMT_BUILD_DIR "/lib/cudasim";

struct Run {
    TempDir dir;
    ProcessResult result;
    std::vector<std::string> traces;
};

// The environment that traces into `dir` (file names t.PID.gmtrace).
Environment tracingEnvironment(const std::string& dir);

// Runs argv traced, with `extra` added to the environment.
Run traced(const std::vector<std::string>& argv, Environment extra = {});

// A traced run with programs/fail_thread_allocations.cpp preloaded after the recorder, which
// fails one thread's allocations (which one: GMT_TEST_FAIL_THREAD) from the `from`-th on.
struct FailingRun : Run {
    long failed = -1; // the allocations it failed; -1: it wrote no count
};
FailingRun tracedOutOfMemory(const std::vector<std::string>& argv, long from,
                             Environment extra = {});

// The run's only trace, dumped; requires that there is exactly one and that it is complete.
DumpedTrace only(const Run& run);

} // namespace gmt::test
