// `gpumemtrace check --format json`: the verdicts as JSON (docs/check.schema.json), for
// programs that act on them (the pytest plugin, CI scripts). A view of the verdicts, like
// the text, the JUnit file, the GitHub annotations and SARIF.
#pragma once

#include "base/json.h"
#include "check/leak_gate.h"
#include "check/source_paths.h"

#include <vector>

namespace gmt::cli {

inline constexpr int kCheckSchemaVersion = 1;

analyzer::Json checkJson(const std::vector<ProcessVerdict>& verdicts,
                         const Suppressions& suppressions, const SourceRoot& root);

} // namespace gmt::cli
