// Free holes inside the address space a process holds on one device: gaps between live
// allocations inside the allocation granules they touch, and unmapped gaps between
// mappings inside a VMM reservation. docs/analysis.md defines every number with a worked
// example; tests/analyzer checks that example.
#pragma once

#include "lifetimes.h"

#include <cstdint>
#include <vector>

namespace gmt::analyzer {

struct Hole {
    uint64_t address = 0;
    uint64_t bytes = 0;
};

// A live allocation that alone keeps granules in use which would otherwise be free.
struct Pin {
    uint64_t address = 0;
    uint64_t bytes = 0;        // the allocation's size
    uint64_t pinned_bytes = 0; // free bytes in the granules only it touches
    uint32_t stack = 0;
    format::Kind kind = format::Kind::None;
    format::Api api = format::Api::Unknown;
};

struct Fragmentation {
    uint32_t process = 0;
    int device = -1;
    uint64_t granularity = 0;
    uint64_t hole_bytes = 0;
    uint64_t largest_hole_bytes = 0;
    uint64_t hole_count = 0;
    double ratio = 0;        // 1 - largest / hole_bytes; 0 without holes
    std::vector<Hole> holes; // largest first, at most `top`
    std::vector<Pin> pins;   // most pinned bytes first, at most `top`
};

Fragmentation measureFragmentation(const Lifetimes& live, uint32_t process, int device,
                                   uint64_t granularity, size_t top);

struct FragmentationRequest {
    int device = -1;
    uint64_t granularity = 0;
};

// Several devices in one walk of the live set, one result per request in request order: a
// trace may name thousands of devices, and a walk per device would cost devices x live.
std::vector<Fragmentation> measureFragmentation(const Lifetimes& live, uint32_t process,
                                                const std::vector<FragmentationRequest>& devices,
                                                size_t top);

} // namespace gmt::analyzer
