// The parts of a path as a trace names it (a module, a source file), without touching the
// file system: the frames' paths are the traced machine's, not this one's.
#pragma once

#include <string_view>

namespace gmt::analyzer {

// "/usr/lib/libc.so.6" -> "libc.so.6"; a name without a slash is its own.
inline std::string_view fileName(std::string_view path) {
    const size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// "/opt/app/bin/app" -> "/opt/app/bin"; empty for a bare name or a file in "/".
inline std::string_view parentDirectory(std::string_view path) {
    const size_t slash = path.rfind('/');
    return slash == std::string_view::npos || slash == 0 ? std::string_view()
                                                         : path.substr(0, slash);
}

} // namespace gmt::analyzer
