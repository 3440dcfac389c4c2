#include "output_path.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gmt::preload {

std::string expandOutputTemplate(const std::string& tmpl, const OutputFacts& facts) {
    std::string out;
    for (size_t i = 0; i < tmpl.size(); ++i) {
        if (tmpl[i] != '%' || i + 1 == tmpl.size()) {
            out += tmpl[i];
            continue;
        }
        char c = tmpl[++i];
        if (c == 'p') {
            out += std::to_string(facts.pid);
        } else if (c == 'r') {
            out += facts.rank >= 0 ? std::to_string(facts.rank) : std::string("norank");
        } else if (c == 'h') {
            char host[256] = {};
            gethostname(host, sizeof host - 1);
            out += host;
        } else if (c == 't') {
            char buf[32];
            time_t now = time(nullptr);
            struct tm tm;
            localtime_r(&now, &tm);
            strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
            out += buf;
        } else if (c == 'q' && i + 1 < tmpl.size() && tmpl[i + 1] == '{' &&
                   tmpl.find('}', i + 2) != std::string::npos) {
            size_t close = tmpl.find('}', i + 2);
            std::string name = tmpl.substr(i + 2, close - (i + 2));
            if (const char* v = std::getenv(name.c_str())) {
                out += v;
            }
            i = close;
        } else if (c == '%') {
            out += '%';
        } else {
            out += '%';
            out += c;
        }
    }
    return out;
}

bool createParentDirectories(const std::string& path, std::string* why) {
    auto fail = [&](std::string reason) {
        if (why) {
            *why = std::move(reason) + ": " + std::strerror(errno);
        }
        return false;
    };
    size_t last_slash = path.rfind('/');
    if (last_slash == std::string::npos || last_slash == 0) {
        return true; // in the working directory, or in /
    }
    // Walk with directory descriptors, so a component is checked where it is entered.
    int dir = ::open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        return fail("cannot open the directory to start from");
    }
    size_t start = 0;
    while (start < last_slash) {
        size_t end = path.find('/', start);
        std::string name = path.substr(start, end - start);
        start = end + 1;
        if (name.empty() || name == ".") {
            continue;
        }
        int next = ::openat(dir, name.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (next < 0 && errno == ENOENT) {
            if (::mkdirat(dir, name.c_str(), 0777) != 0 && errno != EEXIST) {
                const int err = errno;
                ::close(dir);
                errno = err;
                return fail("cannot create directory " + path.substr(0, end));
            }
            next = ::openat(dir, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0) {
            const int err = errno;
            ::close(dir);
            errno = err;
            return fail("cannot enter directory " + path.substr(0, end));
        }
        ::close(dir);
        dir = next;
    }
    ::close(dir);
    return true;
}

} // namespace gmt::preload
