// What every export format implements. The exporter (exporter.h) streams the traces through
// one analysis; a writer sees each record just before the analysis takes it, each counted
// allocation's lifetime as it begins and ends (LifetimeObserver), and, at the end, the
// finished analysis and, when it asks for one, the report built from it. Event-level
// output is written as it comes; nothing grows with the trace's length.
#pragma once

#include "analysis/lifetimes.h"
#include "model/report.h"
#include "read/record.h"

#include <cstdint>

namespace gmt::analyzer {

// Pointers, array handles and VMM handle values are separate name spaces: the same number
// may be live in two of them. Writers that key live allocations by address key them by
// (space, address).
inline constexpr size_t kAddressSpaces = 3;
inline size_t addressSpace(format::Kind kind) {
    return kind == format::Kind::Array ? 1 : kind == format::Kind::Vmm ? 2 : 0;
}

class ExportWriter : public LifetimeObserver {
  public:
    virtual void record(uint32_t /*process*/, const Record& /*record*/) {}
    // The report's leak and peak tables (ndjson, folded) come from the typed model.
    virtual bool needsReport() const { return false; }
    // After the last record: `report` is null unless needsReport().
    virtual void finish(const Report* report) = 0;
};

} // namespace gmt::analyzer
