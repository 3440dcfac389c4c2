// What the simulated machine looks like, from the environment (read once, by cuInit).
#pragma once

#include <cstdint>

namespace cudasim {

struct Config {
    int devices;       // CUDASIM_DEVICES, default 1
    uint64_t capacity; // CUDASIM_MEMORY_BYTES per device, default 80 GiB
};

// Malformed values are reported on stderr and replaced by the default: a typo must not turn
// into a silently different machine.
Config read_config_from_environment();

} // namespace cudasim
