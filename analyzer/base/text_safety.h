// Strings from a trace (command lines, paths, symbol names) may hold any bytes: invalid
// UTF-8, terminal control sequences. These make them safe for where they go: JSON and
// XML need valid UTF-8, a terminal must never receive a control character it would act on.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gmt::analyzer {

// Invalid UTF-8 sequences replaced by U+FFFD; everything else kept (JSON escapes control
// characters itself).
std::string validUtf8(std::string_view text);

// For a terminal: C0 and C1 control characters, DEL and bytes that are not UTF-8 written
// as "\xNN"; printable text kept.
std::string printable(std::string_view text);

// Characters (code points) in valid UTF-8: the columns a line takes, near enough for
// the text this tool prints.
size_t columns(std::string_view utf8);

// At most `width` columns of valid UTF-8, ending in "…" when cut.
std::string fitColumns(std::string_view utf8, size_t width);

} // namespace gmt::analyzer
