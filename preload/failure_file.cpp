#include "failure_file.h"

#include "printable.h"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>

namespace gmt::preload {

void appendFailure(const std::string& file, pid_t pid, const std::string& path,
                   const std::string& why) {
    if (file.empty()) {
        return;
    }
    const int keep = errno; // the program's, whatever call brought us here
    const std::string line =
        std::to_string(pid) + "\t" + printable(path) + "\t" + printable(why) + "\n";
    const int fd =
        ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
        (void)!::write(fd, line.data(), line.size());
        ::close(fd);
    }
    errno = keep;
}

} // namespace gmt::preload
