// Free holes inside the address space a process holds on one device: gaps between live
// allocations inside the allocation granules they touch, and unmapped gaps between
// mappings inside a VMM reservation. docs/analysis.md defines every number with a worked
// example; tests/analyzer checks that example.
#pragma once

#include "analysis/lifetimes.h"
#include "model/report.h"

#include <cstdint>
#include <vector>

namespace gmt::analyzer {

// A hole is measured as the report lists it (model/report.h HoleReport), and so is a span
// (LayoutSpanReport): one type each, no copy between the stages.

// A live allocation that alone keeps granules in use which would otherwise be free.
struct Pin {
    uint64_t address = 0;
    uint64_t bytes = 0;        // the allocation's size
    uint64_t pinned_bytes = 0; // free bytes in the granules only it touches
    uint32_t stack = 0;
    format::Kind kind = format::Kind::None;
    format::Api api = format::Api::Unknown;
};

// The process's memory on the device in address order, for drawing it to scale: the runs
// of touched granules and the VMM reservations (spans), the live allocations and mappings
// in them (blocks) and the holes. Each list keeps the first entries in address order, up
// to the limit measureFragmentation() is given; the counts are of all of them.
struct LayoutBlock {
    uint64_t address = 0;
    uint64_t extent = 0;       // the address range it holds
    uint64_t bytes = 0;        // what was asked for (a mapping: its size)
    uint64_t pinned_bytes = 0; // free bytes in granules only it touches (Pin)
    uint32_t stack = 0;
    format::Kind kind = format::Kind::None;
    format::Api api = format::Api::Unknown;
};
struct AddressLayout {
    std::vector<LayoutSpanReport> spans;
    std::vector<LayoutBlock> blocks;
    std::vector<HoleReport> holes;
    uint64_t span_count = 0;
    uint64_t block_count = 0;
};

struct Fragmentation {
    uint32_t process = 0;
    int device = -1;
    uint64_t granularity = 0;
    uint64_t hole_bytes = 0;
    uint64_t largest_hole_bytes = 0;
    uint64_t hole_count = 0;
    double ratio = 0;              // 1 - largest / hole_bytes; 0 without holes
    std::vector<HoleReport> holes; // largest first, at most `top`
    std::vector<Pin> pins;         // most pinned bytes first, at most `top`
    bool has_layout = false;
    AddressLayout layout; // when layout_entries > 0
};

// layout_entries: 0 leaves the layout out; otherwise each of its lists keeps that many.
Fragmentation measureFragmentation(const Lifetimes& live, uint32_t process, int device,
                                   uint64_t granularity, size_t top, size_t layout_entries = 0);

struct FragmentationRequest {
    int device = -1;
    uint64_t granularity = 0;
};

// Several devices in one walk of the live set, one result per request in request order: a
// trace may name thousands of devices, and a walk per device would cost devices x live.
std::vector<Fragmentation> measureFragmentation(const Lifetimes& live, uint32_t process,
                                                const std::vector<FragmentationRequest>& devices,
                                                size_t top, size_t layout_entries = 0);

} // namespace gmt::analyzer
