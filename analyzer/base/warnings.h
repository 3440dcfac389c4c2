// Warnings: what the analyzer went on without, and the user should know it did (a module
// named by a trace that it refused to open, so its frames stay module + offset). One line
// each on standard error, "gpumemtrace: warning: ...", and each said once per run however
// many traces or threads meet it; the report itself stays what it would be.
#pragma once

#include <string>

namespace gmt::analyzer {

// Writes `text` (made printable) as a warning line unless the same text was written
// before. Thread-safe.
void warnOnce(const std::string& text);

} // namespace gmt::analyzer
