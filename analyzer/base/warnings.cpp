#include "base/warnings.h"

#include "base/text_safety.h"

#include <cstdio>
#include <mutex>
#include <set>

namespace gmt::analyzer {

void warnOnce(const std::string& text) {
    static std::mutex mutex;
    static std::set<std::string> said;
    std::lock_guard lock(mutex);
    if (!said.insert(text).second) {
        return;
    }
    // stdio, unbuffered on stderr: a whole line per call even with other threads writing.
    const std::string line = "gpumemtrace: warning: " + printable(text) + "\n";
    std::fputs(line.c_str(), stderr);
}

} // namespace gmt::analyzer
