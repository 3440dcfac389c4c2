// Runs a shell command line and captures its exit status, stdout and stderr (CLI tests
// that read best as the command a user would type).
#pragma once

#include "subprocess.h"

#include <string>

namespace gmt::test {

struct CommandResult {
    int status = -1; // exit status; -1 when it did not exit normally
    std::string out;
    std::string err;
};

inline CommandResult runCommand(const std::string& command) {
    ProcessResult p = runProcess({"/bin/sh", "-c", command});
    return {p.exited ? p.exit_code : -1, p.out, p.err};
}

} // namespace gmt::test
