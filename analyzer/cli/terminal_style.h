// How text output looks where it goes. Colour only on a terminal, never with NO_COLOR
// set (https://no-color.org) or TERM=dumb. Lines are cut to the width of the terminal the
// user reads: COLUMNS when set; else the terminal the output goes to; else, for a pipe
// (`gpumemtrace report T | less`), the terminal on stderr or stdin, so a pipe shows the
// same lines; a regular file or no terminal at all gets whole lines.
#pragma once

#include "views/styled_text.h"

namespace gmt::cli {

analyzer::TextStyle terminalStyle(int fd);

} // namespace gmt::cli
