// The allocator settings a what-if replay runs under, written as PYTORCH_CUDA_ALLOC_CONF
// spells them ("expandable_segments:True,max_split_size_mb:128"): the ones the command
// line names, the run's own (from the recorder's CachingAllocatorInfo), and the set tried
// when none is named.
#pragma once

#include "analysis/caching/allocator_rules.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gmt::analyzer {

struct ReplaySetting {
    std::string setting; // as PYTORCH_CUDA_ALLOC_CONF spells it; "" for PyTorch's defaults
    std::string label;   // "recorded", "default", or the setting
    AllocatorRules rules;
    bool recorded = false;
    // An item of the run's own settings the model does not follow (replays are then
    // estimates); "" when every item was understood.
    std::string not_understood;
};

// The keys a setting may name, each with the values it takes, for error messages and help.
const std::vector<std::string>& knownSettingKeys();

// One --setting: "default", or a comma-separated list of known keys with valid values.
// nullopt with `error` set (naming the known keys) otherwise.
std::optional<ReplaySetting> parseReplaySetting(std::string_view text, std::string& error);

// The run's own settings: `config` as the recorder wrote it ("PYTORCH_CUDA_ALLOC_CONF=...\n"
// lines), `backend` the allocator backend it found ("native", "cudaMallocAsync", "").
ReplaySetting recordedSetting(const std::string& config, const std::string& backend);

// What is tried when no setting is named: the run's own (first), PyTorch's defaults,
// expandable segments, a split limit, power-of-two rounding, garbage collection (only with
// a capacity: it acts against one) and the cudaMallocAsync backend.
std::vector<ReplaySetting> defaultReplaySettings(const ReplaySetting& recorded, bool with_capacity);

} // namespace gmt::analyzer
