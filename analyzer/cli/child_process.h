// Running the recorded command as a child: fork/execvp, termination signals forwarded,
// and its status turned into the exit status a shell would report.
#pragma once

#include <string>
#include <vector>

namespace gmt::cli {

struct ChildStatus {
    int exit_code = 0;       // WEXITSTATUS, or 128 + signal when killed
    int signal = 0;          // the signal that killed it, 0 when it exited
    bool started = true;     // false: execvp failed (exit_code is then 127 or 126)
    std::string start_error; // why it could not start
};

// Runs argv[0] (searched in PATH) with the current environment and waits for it.
// SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to this process are passed on to the child;
// ones the terminal sent to the whole foreground group are not sent twice.
ChildStatus runChild(const std::vector<std::string>& argv);

} // namespace gmt::cli
