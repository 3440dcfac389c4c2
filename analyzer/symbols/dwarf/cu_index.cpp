#include "symbols/dwarf/cu_index.h"

#include <elfutils/libdw.h>

#include <algorithm>

namespace gmt::analyzer::symbolize {

Dwarf_Die* CuIndex::find(Dwfl_Module* module, uint64_t address, Dwarf_Addr* bias) {
    if (Dwarf_Die* cu = dwfl_module_addrdie(module, address, bias)) {
        return cu;
    }
    if (!built_) {
        build(module);
    }
    *bias = bias_;
    const Dwarf_Addr pc = address - bias_;
    auto it = std::upper_bound(ranges_.begin(), ranges_.end(), pc,
                               [](Dwarf_Addr value, const Range& r) { return value < r.start; });
    // Ranges can nest or overlap (CUs sharing COMDAT code), so earlier ones may still
    // reach `pc`; max_end says when none of the remaining ones can.
    while (it != ranges_.begin()) {
        --it;
        if (it->max_end <= pc) {
            break;
        }
        if (pc < it->end) {
            return it->cu;
        }
    }
    return nullptr;
}

void CuIndex::build(Dwfl_Module* module) {
    built_ = true;
    Dwarf_Die* cu = nullptr;
    Dwarf_Addr bias = 0;
    while ((cu = dwfl_module_nextcu(module, cu, &bias)) != nullptr) {
        bias_ = bias;
        Dwarf_Addr base = 0, start = 0, end = 0;
        ptrdiff_t offset = 0;
        while ((offset = dwarf_ranges(cu, offset, &base, &start, &end)) > 0) {
            if (end > start) {
                ranges_.push_back(Range{start, end, 0, cu});
            }
        }
    }
    std::sort(ranges_.begin(), ranges_.end(),
              [](const Range& a, const Range& b) { return a.start < b.start; });
    Dwarf_Addr max_end = 0;
    for (Range& range : ranges_) {
        max_end = std::max(max_end, range.end);
        range.max_end = max_end;
    }
}

} // namespace gmt::analyzer::symbolize
