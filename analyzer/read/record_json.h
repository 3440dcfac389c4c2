// JSON renderings of trace records: the `dump` command's lines. Addresses and handles are
// hex strings (base/hex.h).
#pragma once

#include "read/record.h"

#include "base/json.h"

#include <gpumemtrace/format/file_layout.h>

namespace gmt::analyzer {

// {"record": "...", ...} for any record, into `sink` (base/json_sink.h: JsonTreeSink or
// JsonTextSink); the header gets the prologue's facts too. `dump` writes text for every
// record of a trace: through JsonTextSink no Json value is made for any of them.
template <typename Sink>
void writeRecordJson(const Record& r, const format::Prologue& prologue, Sink& sink);
// The same as a Json value.
Json recordJson(const Record& r, const format::Prologue& prologue);

} // namespace gmt::analyzer
