// The JSON of `gpumemtrace whatif` (docs/whatif.schema.json): the field lists of
// model/whatif.h, written by the same walk as the report's JSON (report_json_writer.cpp).
#pragma once

#include "base/json.h"
#include "model/whatif.h"

#include <string>

namespace gmt::analyzer {

Json toJson(const WhatIfReport& report);

} // namespace gmt::analyzer
