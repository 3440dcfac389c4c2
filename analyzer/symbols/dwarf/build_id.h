// GNU build-ids: the one reliable way to tell whether a file on disk is the object the
// traced process had loaded, and the key of the .build-id debug file trees (written as
// bytesHex() of base/hex.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gmt::analyzer::symbolize {

// Files that may hold the object with this build-id, best first: for each absolute
// directory of `debuginfo_path` (elfutils syntax, empty = its default),
// DIR/.build-id/xx/yyyy.debug (the separate debug file) and DIR/.build-id/xx/yyyy (the
// object itself, where a distribution installs that link).
std::vector<std::string> buildIdCandidates(std::string_view raw_build_id,
                                           std::string_view debuginfo_path);

} // namespace gmt::analyzer::symbolize
