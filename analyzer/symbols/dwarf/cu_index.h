// Which compilation unit of a module covers an address. libdw finds CUs through
// .debug_aranges, which clang does not emit by default and which elfutils before 0.190
// does not reconstruct; without this fallback clang-built code would get no lines.
#pragma once

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <vector>

namespace gmt::analyzer::symbolize {

class CuIndex {
  public:
    // The CU DIE covering `address` (absolute) and the DWARF bias, or null. The DIE lives
    // as long as the module's Dwfl session.
    Dwarf_Die* find(Dwfl_Module* module, uint64_t address, Dwarf_Addr* bias);

  private:
    struct Range {
        Dwarf_Addr start; // DWARF addresses (without bias), half-open
        Dwarf_Addr end;
        Dwarf_Addr max_end; // highest end among this and all earlier ranges
        Dwarf_Die* cu;
    };

    // Reads every CU's address ranges; done once per module, only when needed.
    void build(Dwfl_Module* module);

    bool built_ = false;
    Dwarf_Addr bias_ = 0;
    std::vector<Range> ranges_; // sorted by start
};

} // namespace gmt::analyzer::symbolize
