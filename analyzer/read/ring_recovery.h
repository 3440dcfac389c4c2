// Recovery of the records the writer thread never turned into log frames: committed
// ring slots whose sequence position the last valid frame does not cover. This is what
// makes a SIGKILLed process's last calls visible.
#pragma once

#include "read/record.h"
#include "read/trace_file.h"

#include <gpumemtrace/format/event_codec.h>
#include <gpumemtrace/format/file_layout.h>
#include <gpumemtrace/format/ring_slot.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace gmt::analyzer {

class RingRecovery {
  public:
    // Scans the ring once, remembering (position, slot index) of every committed slot at
    // a position >= `first_uncovered`; 16 bytes per such slot, bounded by the ring size.
    RingRecovery(const TraceFile& file, const format::Prologue& prologue, uint64_t first_uncovered);

    // The next recovered record in sequence order; false when none is left. Incomplete
    // multi-slot records are skipped, later complete ones still come. out.missing_before
    // counts the positions before it that no slot holds (from `first_uncovered` on for
    // the first one): the ring did not join the log, or a slot was never committed.
    bool next(Record& out, format::EventCoder& prev);

    size_t skippedSlots() const { return skipped_; }
    uint64_t missingPositions() const { return missing_total_; }

  private:
    bool readSlot(uint32_t index, format::Slot& slot) const;

    const TraceFile& file_;
    format::Prologue prologue_;
    std::vector<std::pair<uint64_t, uint32_t>> committed_; // (position, slot index)
    size_t cursor_ = 0;
    size_t skipped_ = 0;
    uint64_t expected_ = 0; // the position that would join what came before
    uint64_t missing_ = 0;  // since the last record handed out
    uint64_t missing_total_ = 0;
    std::vector<uint8_t> blob_;
};

} // namespace gmt::analyzer
