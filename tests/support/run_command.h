// Runs a shell command and captures its exit status, stdout and stderr (CLI tests).
#pragma once

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace gmt::test {

struct CommandResult {
    int status = -1; // exit status; -1 when it did not exit normally
    std::string out;
    std::string err;
};

inline CommandResult runCommand(const std::string& command, const std::string& err_file) {
    CommandResult r;
    std::string full = command + " 2>" + err_file;
    FILE* pipe = ::popen(full.c_str(), "r");
    if (!pipe) {
        return r;
    }
    std::array<char, 4096> buf{};
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) {
        r.out.append(buf.data(), n);
    }
    int st = ::pclose(pipe);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    std::ifstream e(err_file);
    std::stringstream ss;
    ss << e.rdbuf();
    r.err = ss.str();
    return r;
}

} // namespace gmt::test
