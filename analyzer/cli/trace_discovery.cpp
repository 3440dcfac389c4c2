#include "cli/trace_discovery.h"

#include <climits>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gmt::cli {

namespace {

std::string escapeGlob(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '*' || c == '?' || c == '[' || c == '\\') {
            out += '\\';
        }
        out += c;
    }
    return out;
}

std::string hostName() {
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    return host;
}

} // namespace

std::string absoluteTemplate(const std::string& tmpl) {
    if (!tmpl.empty() && tmpl.front() == '/') {
        return tmpl;
    }
    char cwd[PATH_MAX];
    if (!::getcwd(cwd, sizeof cwd)) {
        return tmpl;
    }
    // A literal '%' in the directory must survive the recorder's expansion.
    std::string dir;
    for (const char* p = cwd; *p; ++p) {
        dir += *p;
        if (*p == '%') {
            dir += '%';
        }
    }
    return dir + "/" + tmpl;
}

std::vector<std::string> templateGlobs(const std::string& tmpl, const std::string& host) {
    std::string pattern;
    for (size_t i = 0; i < tmpl.size(); ++i) {
        if (tmpl[i] != '%' || i + 1 == tmpl.size()) {
            pattern += escapeGlob(std::string(1, tmpl[i]));
            continue;
        }
        char c = tmpl[++i];
        if (c == 'p') {
            pattern += "[0-9]*";
        } else if (c == 't') {
            pattern += "[0-9]*-[0-9]*";
        } else if (c == 'h') {
            pattern += escapeGlob(host);
        } else if (c == 'r') {
            pattern += '*'; // a rank, or "norank"
        } else if (c == 'q' && i + 1 < tmpl.size() && tmpl[i + 1] == '{' &&
                   tmpl.find('}', i + 2) != std::string::npos) {
            // Each process's own value of the variable (launchers set them per process);
            // a value with '/' in it is not found.
            pattern += '*';
            i = tmpl.find('}', i + 2);
        } else if (c == '%') {
            pattern += '%';
        } else {
            pattern += '%' + escapeGlob(std::string(1, c));
        }
    }
    // The clash suffix goes before the last extension of the file name (preload's
    // trace_file.cpp), or at the end when the name has none.
    std::string clash;
    size_t slash = pattern.rfind('/');
    size_t dot = pattern.rfind('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) {
        clash = pattern + ".[0-9]*";
    } else {
        clash = pattern.substr(0, dot) + ".[0-9]*" + pattern.substr(dot);
    }
    return {pattern, clash};
}

TraceDiscovery::TraceDiscovery(const std::string& absolute_template)
    : globs_(templateGlobs(absolute_template, hostName())) {
    before_ = list();
}

std::map<std::string, TraceDiscovery::Stamp> TraceDiscovery::list() const {
    std::map<std::string, Stamp> out;
    for (const std::string& pattern : globs_) {
        glob_t g{};
        if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
            for (size_t i = 0; i < g.gl_pathc; ++i) {
                struct stat st {};
                if (::stat(g.gl_pathv[i], &st) == 0 && S_ISREG(st.st_mode)) {
                    out[g.gl_pathv[i]] = {static_cast<unsigned long long>(st.st_ino),
                                          st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
                                          static_cast<long long>(st.st_size)};
                }
            }
        }
        ::globfree(&g);
    }
    return out;
}

std::vector<std::string> TraceDiscovery::newTraces() const {
    std::vector<std::string> out;
    for (const auto& [path, stamp] : list()) {
        auto it = before_.find(path);
        if (it == before_.end() || !(it->second == stamp)) {
            out.push_back(path);
        }
    }
    return out;
}

} // namespace gmt::cli
