// The loaded ELF objects, for symbolizing stacks offline. The loader's dlpi_adds and
// dlpi_subs counters say whether anything was loaded or unloaded since the last look, so
// the full walk happens only after a dlopen/dlclose, and only when a new stack is seen.
// Out of host memory, what a walk could not keep is emitted by the next one.
#pragma once

#include <gpumemtrace/format/records.h>

#include <cstdint>
#include <vector>

namespace gmt::preload {

class ModuleMap {
  public:
    using EmitFn = void (*)(const format::ModuleInfo& module, void* ctx);

    // Emits every module not emitted before, if the loader's counters moved.
    void refresh(EmitFn emit, void* ctx);
    // A new trace (forked child): everything must be written again.
    void reset();

  private:
    struct Known {
        uint64_t start;
        uint64_t end;
    };
    unsigned long long adds_ = ~0ull;
    unsigned long long subs_ = ~0ull;
    std::vector<Known> emitted_;
};

} // namespace gmt::preload
