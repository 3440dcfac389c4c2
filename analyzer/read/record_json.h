// JSON renderings of trace records: the `dump` command's lines, and the pieces of the
// report that echo trace facts. Addresses and handles are hex strings (base/hex.h).
#pragma once

#include "read/record.h"

#include "base/json.h"

#include <string>

#include <gpumemtrace/format/file_layout.h>

namespace gmt::analyzer {

Json headerJson(const format::HeaderInfo& h);
Json eventJson(const format::Event& e);
// {"record": "...", ...} for any record; the header gets the prologue's facts too.
Json recordJson(const Record& r, const format::Prologue& prologue);

} // namespace gmt::analyzer
