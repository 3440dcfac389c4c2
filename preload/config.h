// Settings from the environment (docs/configuration.md), read once at load time so the hot path
// never calls getenv.
#pragma once

#include <cstdint>
#include <string>

namespace gmt::preload {

enum class OnFull { Block, Drop };

struct Config {
    bool enabled = true;
    std::string output_template = "gpumemtrace.%p.gmtrace";
    uint32_t stack_depth = 64;
    bool python = true; // Python frames in the stacks when the process runs CPython
    uint64_t buffer_bytes = 1u << 20;
    OnFull on_full = OnFull::Block;
    std::string log_level = "warn";
};

// Parses the GPUMEMTRACE_* variables; bad values are reported (through the logger) and
// replaced by defaults rather than changing the traced program's behaviour.
Config readConfig();

} // namespace gmt::preload
