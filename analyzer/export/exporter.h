// `gpumemtrace export`: traces into the formats of the viewers people already use. One
// streaming pass: the traces are read once, through one analysis (the same as `report`'s),
// and the chosen writer sees every record and every allocation's lifetime as it goes, so
// event-level formats never hold the events; table-level ones (folded leaks and peak, the
// ndjson leak and peak tables) come from the report built at the end. docs/export.md
// describes each format and how to open it.
#pragma once

#include "export/folded_writer.h"

#include <string>
#include <vector>

namespace gmt::analyzer {

enum class ExportFormat { MemoryViz, Perfetto, Folded, Ndjson };

struct ExportOptions {
    ExportFormat format = ExportFormat::Perfetto;
    // memory-viz: a file for one trace, a directory for several (one snapshot per process);
    // perfetto, folded: a file; ndjson: a directory. "-" or empty: standard output, where
    // a single file is written.
    std::string output;
    FoldedMetric metric = FoldedMetric::Leaked;
    bool symbols = true;
    UserCodeOptions user_code; // which frames are the user's own (report/own_code.h)
    bool full_stacks = false;
};

// Where each memory-viz snapshot goes, one per trace: OUT itself for one trace, else
// DIR/NAME.pickle with NAME the trace's file name less ".gmtrace". Throws OutputError when
// two traces would write the same file or OUT is missing for several traces.
std::vector<std::string> memoryVizOutputs(const std::vector<std::string>& traces,
                                          const std::string& output);

// Throws TraceError for a trace that cannot be read at all, OutputError when an output
// cannot be written. Outputs are opened before the first record is read.
void exportTraces(const std::vector<std::string>& traces, const ExportOptions& options);

} // namespace gmt::analyzer
