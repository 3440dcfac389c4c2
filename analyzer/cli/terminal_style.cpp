#include "cli/terminal_style.h"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gmt::cli {

namespace {

size_t terminalWidth(int fd) {
    struct winsize ws {};
    if (::isatty(fd) && ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
        return ws.ws_col;
    }
    return 0;
}

size_t widthFor(int fd) {
    if (const char* columns = std::getenv("COLUMNS")) {
        size_t n = 0;
        const char* end = columns + std::strlen(columns);
        if (std::from_chars(columns, end, n).ptr == end && n > 0) {
            return n;
        }
    }
    if (size_t w = terminalWidth(fd)) {
        return w;
    }
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        return 0;
    }
    if (size_t w = terminalWidth(STDERR_FILENO)) {
        return w;
    }
    return terminalWidth(STDIN_FILENO);
}

} // namespace

analyzer::TextStyle terminalStyle(int fd) {
    analyzer::TextStyle style;
    const char* no_color = std::getenv("NO_COLOR");
    const char* term = std::getenv("TERM");
    style.colour =
        ::isatty(fd) && !(no_color && *no_color) && !(term && std::strcmp(term, "dumb") == 0);
    style.width = widthFor(fd);
    return style;
}

} // namespace gmt::cli
