// Settings from the environment (docs/configuration.md), read once at load time so the hot path
// never calls getenv.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gmt::preload {

enum class OnFull { Block, Drop };

// Each field is one setting of gpumemtrace/settings.h; readConfig starts every one from the
// table's default.
struct Config {
    bool enabled = false;
    // GPUMEMTRACE_START=paused: the trace is created paused (its prologue's control word).
    bool start_paused = false;
    std::string output_template;
    uint32_t stack_depth = 0;
    bool python = false; // Python frames in the stacks when the process runs CPython
    // Block events of a framework's caching allocator (PyTorch's), when one is loaded.
    bool caching_allocator = false;
    uint64_t buffer_bytes = 0; // at most settings::kMaxBufferBytes
    OnFull on_full = OnFull::Block;
    // GPUMEMTRACE_MODE=aggregate: the writer folds events (aggregator.h) into checkpoints of
    // at most aggregate_budget / 2 bytes each.
    bool aggregate = false;
    uint64_t aggregate_budget = 0;
    std::string log_level;
    // Where a process that cannot create its trace says why (empty: nowhere but stderr).
    std::string failure_file;
    // Bad values found by readConfig, each replaced by its default (or clamped); one line
    // each, its environment text escaped (printable.h).
    std::vector<std::string> problems;
};

// Parses the GPUMEMTRACE_* variables of gpumemtrace/settings.h; bad values are replaced by defaults
// rather than changing the traced program's behaviour, and noted in Config::problems.
Config readConfig();

// Logs Config::problems as warnings, once per process. Called when the process starts
// tracing (its first CUDA call): a process that never uses CUDA stays silent.
void reportConfigProblems(const Config& config);

} // namespace gmt::preload
