// `gpumemtrace check --format github`: the text verdict followed by GitHub Actions
// workflow commands (`::error file=F,line=L,title=T::MESSAGE`), one per leaking site,
// growing site, bad free or site held at an exceeded peak, placed on the source line of
// the site's first shown frame, so the run's summary and the pull request's diff show
// them. A failed check without such a site gets one annotation without a place.
#pragma once

#include "check/leak_gate.h"
#include "check/source_paths.h"

#include <string>
#include <string_view>
#include <vector>

namespace gmt::cli {

std::string githubAnnotations(const std::vector<ProcessVerdict>& verdicts, const SourceRoot& root);

// The escaping GitHub's workflow commands need: in a message %, CR and LF; in a property
// value also ':' and ','. Other control characters and invalid UTF-8 are shown as \xNN
// (analyzer::printable).
std::string githubEscape(std::string_view text, bool property);

} // namespace gmt::cli
