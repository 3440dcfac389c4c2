// JSON renderings of trace records: the `dump` command's lines, and the pieces of the
// report that echo trace facts. Addresses and handles are hex strings ("0x7f..."):
// JSON numbers lose precision past 2^53 in most consumers.
#pragma once

#include "read/record.h"

#include "base/json.h"

#include <string>

#include <gpumemtrace/format/file_layout.h>

namespace gmt::analyzer {

std::string hex(uint64_t value);

Json headerJson(const format::HeaderInfo& h);
Json eventJson(const format::Event& e);
// {"record": "...", ...} for any record; the header gets the prologue's facts too.
Json recordJson(const Record& r, const format::Prologue& prologue);

} // namespace gmt::analyzer
