// Settings from the environment (docs/configuration.md), read once at load time so the hot path
// never calls getenv.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gmt::preload {

enum class OnFull { Block, Drop };

struct Config {
    bool enabled = true;
    std::string output_template = "gpumemtrace.%p.gmtrace";
    uint32_t stack_depth = 64;
    bool python = true; // Python frames in the stacks when the process runs CPython
    // Block events of a framework's caching allocator (PyTorch's), when one is loaded.
    bool caching_allocator = true;
    uint64_t buffer_bytes = 1u << 20;
    OnFull on_full = OnFull::Block;
    std::string log_level = "warn";
    // Bad values found by readConfig, each replaced by its default; one line each.
    std::vector<std::string> problems;
};

// Parses the GPUMEMTRACE_* variables; bad values are replaced by defaults rather than
// changing the traced program's behaviour, and noted in Config::problems.
Config readConfig();

// Logs Config::problems as warnings, once per process. Called when the process starts
// tracing (its first CUDA call): a process that never uses CUDA stays silent.
void reportConfigProblems(const Config& config);

} // namespace gmt::preload
