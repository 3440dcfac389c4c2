// Where the trace of this process goes: the GPUMEMTRACE_OUTPUT template expanded for it,
// and the directories on the way created.
#pragma once

#include <cstdint>
#include <string>

namespace gmt::preload {

struct OutputFacts {
    int pid = 0;
    int32_t rank = -1; // -1: not launched as a rank
};

// "%p" pid, "%r" rank ("norank" when the process has none), "%h" host name, "%t" start
// time (YYYYmmdd-HHMMSS), "%q{VAR}" the value of environment variable VAR (empty when
// unset), "%%" a percent sign. Anything else, an unterminated "%q{" included, stays as
// written.
std::string expandOutputTemplate(const std::string& tmpl, const OutputFacts& facts);

// Creates the directories leading to `path` that do not exist (mode 0777 less the umask,
// as `mkdir -p`). Directories that already exist are taken as they are, symlinks
// included, as before; one this call creates is entered only if it is still a directory
// and not a symlink. Returns false when one cannot be made, with the reason in `why` (when
// given).
bool createParentDirectories(const std::string& path, std::string* why = nullptr);

} // namespace gmt::preload
