// The JSON type of everything the analyzer emits: insertion-ordered, so that output reads
// in the order of the contract ("record" first on a dump line, schema_version first in a
// report) rather than alphabetically.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace gmt::analyzer {
using Json = nlohmann::ordered_json;

// JSON text that is always valid UTF-8: a string holding bytes that are not (a path or
// command line from a trace) gets U+FFFD for them instead of an exception.
inline std::string jsonText(const Json& j, int indent = -1) {
    return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}
} // namespace gmt::analyzer
