// An aggregated trace's checkpoint (format/aggregate.h): of the two regions after the ring,
// the valid one with the highest sequence, handed out record by record. Its events are in
// their order of recording, delta-coded from the start of the checkpoint.
#pragma once

#include "read/record.h"
#include "read/trace_file.h"

#include <gpumemtrace/format/event_codec.h>
#include <gpumemtrace/format/file_layout.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gmt::analyzer {

class CheckpointReader {
  public:
    // Reads both regions' headers and loads the newest valid checkpoint (at most one
    // region's bytes, a size the prologue bounds).
    CheckpointReader(const TraceFile& file, const format::Prologue& prologue);

    // The next record of the checkpoint; false at its end (or at a malformed record, which
    // its checksum makes a bug of the writer: skipped_ then says so).
    bool next(Record& out);

    bool found() const { return found_; }
    // The ring positions it covers: the ring holds what came after, from here on.
    uint64_t endSeq() const { return end_seq_; }
    uint64_t skipped() const { return skipped_; }

  private:
    std::vector<uint8_t> payload_;
    size_t cursor_ = 0;
    bool found_ = false;
    uint64_t end_seq_ = 0;
    uint64_t skipped_ = 0;
    format::EventCoder prev_{};
};

// The size of one checkpoint region of an aggregated trace's prologue, or 0 when its
// layout is not a valid one (a reader then rejects the file at the log offset).
uint64_t checkpointRegionSize(const format::Prologue& prologue);

} // namespace gmt::analyzer
