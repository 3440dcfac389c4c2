// `gpumemtrace check --sarif FILE`: the verdicts as a SARIF 2.1.0 log, what code-scanning
// UIs (GitHub code scanning, GitLab, IDEs) read. One result per finding of a failed check
// (a leaking site, a growing site, a bad free, a site held at an exceeded peak), placed on
// the source line of its first shown frame, with the whole stack as a SARIF stack and a
// fingerprint that follows the site (not its addresses) across runs. A failed check with
// no such site is one result without a location. Growth found but not limited is a
// warning. Paths inside the source root are relative to it (uriBaseId SRCROOT). The log is
// written as text (pretty, two spaces, and a final newline), one result at a time.
#pragma once

#include "base/json.h"
#include "check/leak_gate.h"
#include "check/source_paths.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gmt::cli {

// The log handed to `write` a megabyte at a time: a million findings are never whole in
// memory.
void writeSarif(const std::vector<ProcessVerdict>& verdicts, const SourceRoot& root,
                const std::function<void(std::string_view)>& write);

} // namespace gmt::cli
