// The JSON type of everything the analyzer emits: insertion-ordered, so that output reads
// in the order of the contract ("record" first on a dump line, schema_version first in a
// report) rather than alphabetically.
#pragma once

#include <nlohmann/json.hpp>

namespace gmt::analyzer {
using Json = nlohmann::ordered_json;
} // namespace gmt::analyzer
