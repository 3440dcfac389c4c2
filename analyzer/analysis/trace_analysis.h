// Traces in, a finished Analysis out: the reading pass, kept apart from every view of its
// result (the report and what reads it).
#pragma once

#include "analysis/analysis.h"

#include <functional>
#include <string>
#include <vector>

namespace gmt::analyzer {

// Reads every trace (one per process) in one pass, events of different processes
// interleaved by time, into `analysis` (finished on return). Throws TraceError when a
// file is unusable; a truncated or corrupt log is analysed up to its valid part.
//
// `before_record`, when given, sees each record in that merged order just before the
// analysis takes it (a streaming view writes events as they come: export).
using RecordVisitor = std::function<void(uint32_t process, const Record& record)>;
void analyzeTraces(const std::vector<std::string>& traces, Analysis& analysis,
                   const RecordVisitor& before_record = {});

} // namespace gmt::analyzer
