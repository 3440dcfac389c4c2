#include "cli/preload_locator.h"

#include <climits>
#include <sys/stat.h>
#include <unistd.h>

#ifndef GMT_INSTALL_LIBDIR
#define GMT_INSTALL_LIBDIR "lib"
#endif

namespace gmt::cli {

namespace {

std::string executableDir() {
    char buf[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) {
        return ".";
    }
    std::string path(buf, static_cast<size_t>(n));
    size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : path.substr(0, slash);
}

bool isFile(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

} // namespace

std::vector<std::string> preloadCandidates() {
    std::string bin = executableDir();
    std::vector<std::string> out;
    for (const char* libdir : {GMT_INSTALL_LIBDIR, "lib", "lib64"}) {
        std::string candidate = bin + "/../" + libdir + "/libgpumemtrace.so";
        bool seen = false;
        for (const std::string& c : out) {
            seen = seen || c == candidate;
        }
        if (!seen) {
            out.push_back(candidate);
        }
    }
    return out;
}

std::optional<std::string> locatePreloadLibrary() {
    for (const std::string& candidate : preloadCandidates()) {
        if (isFile(candidate)) {
            char resolved[PATH_MAX];
            // The child may change directory; LD_PRELOAD needs a path that stays valid.
            if (::realpath(candidate.c_str(), resolved)) {
                return std::string(resolved);
            }
            return candidate;
        }
    }
    return std::nullopt;
}

std::optional<std::string> preloadPathProblem(const std::string& library) {
    if (library.find_first_of(" :") != std::string::npos) {
        return "contains a space or a colon, which LD_PRELOAD cannot carry (ld.so splits the "
               "list there and has no quoting)";
    }
    if (library.empty() || library.front() != '/') {
        return "is not an absolute path (LD_PRELOAD would search it from the program's "
               "working directory)";
    }
    return std::nullopt;
}

std::string withPreload(const std::string& existing, const std::string& library) {
    // ld.so accepts spaces and colons as separators.
    size_t pos = 0;
    while (pos < existing.size()) {
        size_t end = existing.find_first_of(": ", pos);
        if (end == std::string::npos) {
            end = existing.size();
        }
        if (existing.compare(pos, end - pos, library) == 0 && end - pos == library.size()) {
            return existing;
        }
        pos = end + 1;
    }
    if (existing.find_first_not_of(": ") == std::string::npos) {
        return library;
    }
    return existing + ":" + library;
}

} // namespace gmt::cli
