// Runs a program the way the integration tests need: with extra environment variables,
// its output captured, and optionally stopped from outside once it printed a line.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gmt::test {

struct ProcessResult {
    bool exited = false;
    int exit_code = -1;
    int term_signal = 0;
    std::string out; // stdout
    std::string err; // stderr
};

using Environment = std::vector<std::pair<std::string, std::string>>;

// Runs argv[0] (a path) with `env` added to this process's environment.
ProcessResult runProcess(const std::vector<std::string>& argv, const Environment& env = {});

// Runs it until it printed `line` on stdout, then sends `signal` and waits.
ProcessResult runAndSignalAfter(const std::vector<std::string>& argv, const Environment& env,
                                const std::string& line, int signal);

// Files in `dir` whose names end with `suffix`, sorted.
std::vector<std::string> listFiles(const std::string& dir, const std::string& suffix);

} // namespace gmt::test
