// Why a process runs untraced, told to `gpumemtrace record` (GPUMEMTRACE_FAILURE_FILE). A
// trace that could not be created is missing from the run, and only the process knows why;
// record cannot read its stderr (that is the program's), so the recorder appends a line to
// the file record named. Without such a line, a run without traces is one whose processes
// never called CUDA. docs/configuration.md, `record`, describes the line.
#pragma once

#include <string>
#include <sys/types.h>

namespace gmt::preload {

// Appends "PID<TAB>PATH<TAB>REASON\n" to `file` (nothing when `file` is empty), PATH and
// REASON escaped (printable.h) so that the line stays one line. One write(2) of an
// O_APPEND file: lines of processes that fail at the same time do not mix. Failing to
// write it changes nothing for the program.
void appendFailure(const std::string& file, pid_t pid, const std::string& path,
                   const std::string& why);

} // namespace gmt::preload
