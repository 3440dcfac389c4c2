#include "cli/untraced_processes.h"

#include "base/text_safety.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <unistd.h>

namespace gmt::cli {

std::string UntracedProcess::text() const {
    return analyzer::printable("the recorder could not create its trace at " + path + ": " + why +
                               " (pid " + std::to_string(pid) + ")");
}

UntracedProcesses::UntracedProcesses() {
    const char* tmp = std::getenv("TMPDIR");
    std::string name = std::string(tmp && *tmp ? tmp : "/tmp") + "/gpumemtrace-record.XXXXXX";
    const int fd = ::mkstemp(name.data());
    if (fd >= 0) {
        ::close(fd);
        path_ = name;
    } else {
        error_ = "cannot create " + name + ": " + std::strerror(errno);
    }
}

UntracedProcesses::~UntracedProcesses() {
    if (!path_.empty()) {
        ::unlink(path_.c_str());
    }
}

std::vector<UntracedProcess> UntracedProcesses::read() const {
    std::vector<UntracedProcess> out;
    std::ifstream in(path_);
    for (std::string line; std::getline(in, line);) {
        // PID<TAB>PATH<TAB>REASON; the recorder escapes tabs inside PATH and REASON.
        const size_t tab1 = line.find('\t');
        const size_t tab2 = tab1 == std::string::npos ? tab1 : line.find('\t', tab1 + 1);
        if (tab2 == std::string::npos) {
            continue;
        }
        UntracedProcess p;
        p.pid = std::strtoull(line.c_str(), nullptr, 10);
        p.path = line.substr(tab1 + 1, tab2 - tab1 - 1);
        p.why = line.substr(tab2 + 1);
        out.push_back(std::move(p));
    }
    return out;
}

} // namespace gmt::cli
