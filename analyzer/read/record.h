// One decoded trace record as the reader hands it out. A plain struct with one member
// per record type (not a variant) so that the hot path, an event, never constructs or
// destroys the large stack member.
#pragma once

#include <gpumemtrace/format/aggregate.h>
#include <gpumemtrace/format/event.h>
#include <gpumemtrace/format/records.h>

namespace gmt::analyzer {

struct Record {
    format::RecordTag tag = format::RecordTag::Event;
    bool from_ring = false; // recovered from a committed ring slot, not from the log
    // Sequence positions lost just before this record: neither a valid frame covers them
    // nor a ring slot still holds them (their events are missing from the trace).
    uint64_t missing_before = 0;
    uint64_t position = 0; // its sequence position, for a record from the ring
    format::HeaderInfo header;
    format::DeviceInfo device;
    format::ModuleInfo module;
    format::StackInfo stack;
    format::Event event;
    format::TrailerInfo trailer;
    format::PhaseInfo phase;
    format::PythonCodeInfo python_code;
    format::CachingAllocatorInfo caching_allocator;
    format::RecordingInfo recording;
    format::AggregateSummary aggregate; // an aggregated trace's checkpoint
    format::SiteTotals site_totals;
    format::PhaseTotals phase_totals;
    format::FoldedPeak folded_peak;
    format::FoldedMark folded_mark;
};

} // namespace gmt::analyzer
