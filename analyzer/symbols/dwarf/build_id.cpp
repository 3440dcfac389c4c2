#include "symbols/dwarf/build_id.h"

#include "base/hex.h"

namespace gmt::analyzer::symbolize {

std::vector<std::string> buildIdCandidates(std::string_view raw_build_id,
                                           std::string_view debuginfo_path) {
    std::vector<std::string> candidates;
    // The first byte names the directory; a shorter id cannot be laid out that way.
    if (raw_build_id.size() < 2) {
        return candidates;
    }
    const std::string hex = bytesHex(raw_build_id);
    const std::string relative = "/.build-id/" + hex.substr(0, 2) + "/" + hex.substr(2);
    if (debuginfo_path.empty()) {
        debuginfo_path = "/usr/lib/debug";
    }
    while (!debuginfo_path.empty()) {
        size_t colon = debuginfo_path.find(':');
        std::string_view dir = debuginfo_path.substr(0, colon);
        debuginfo_path =
            colon == std::string_view::npos ? std::string_view{} : debuginfo_path.substr(colon + 1);
        // '+' and '-' prefix an entry to switch CRC checking in elfutils' syntax.
        while (!dir.empty() && (dir.front() == '+' || dir.front() == '-')) {
            dir.remove_prefix(1);
        }
        // Relative entries are relative to the object's own directory: nothing to try
        // when that object is the very file that is missing.
        if (!dir.starts_with('/')) {
            continue;
        }
        while (dir.size() > 1 && dir.ends_with('/')) {
            dir.remove_suffix(1);
        }
        candidates.push_back(std::string(dir) + relative + ".debug");
        candidates.push_back(std::string(dir) + relative);
    }
    return candidates;
}

} // namespace gmt::analyzer::symbolize
