// The processes of a `gpumemtrace record` run that could not create their trace. Each says
// why in a line of the file GPUMEMTRACE_FAILURE_FILE names (preload/failure_file.h): the
// run's one way to tell "no process called CUDA" from "a process could not be traced",
// since the program's stderr is the program's. A gate must not pass what it never saw.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gmt::cli {

struct UntracedProcess {
    uint64_t pid = 0;
    std::string path; // the trace it could not create (escaped by the recorder)
    std::string why;

    // "the recorder could not create its trace at PATH: WHY (pid N)", printable.
    std::string text() const;
};

// A private, empty file for the recorder's lines, made before the run and removed with
// this object.
class UntracedProcesses {
  public:
    UntracedProcesses();
    ~UntracedProcesses();
    UntracedProcesses(const UntracedProcesses&) = delete;
    UntracedProcesses& operator=(const UntracedProcesses&) = delete;

    // Empty when no file could be made (error() says why): the run then cannot tell the
    // two apart.
    const std::string& path() const { return path_; }
    const std::string& error() const { return error_; }
    // The lines written so far, in order; lines that do not parse are skipped.
    std::vector<UntracedProcess> read() const;

  private:
    std::string path_;
    std::string error_;
};

} // namespace gmt::cli
