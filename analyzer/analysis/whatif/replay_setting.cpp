#include "analysis/whatif/replay_setting.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

namespace gmt::analyzer {

namespace {

// Settings that change neither block sizes, nor segments, nor the backend: a run that
// used them replays exactly without them.
bool harmless(std::string_view key) {
    return key.starts_with("pinned_") || key == "release_lock_on_cudamalloc" ||
           key == "graph_capture_record_stream_reuse";
}

bool positiveNumber(std::string_view v) {
    uint64_t n = 0;
    return !v.empty() &&
           std::from_chars(v.data(), v.data() + v.size(), n).ptr == v.data() + v.size() && n > 0 &&
           n < (uint64_t{1} << 40);
}

// Whether `value` is one `key` takes; "" when so, else what it takes.
std::string checkValue(std::string_view key, std::string_view value) {
    if (key == "max_split_size_mb") {
        return positiveNumber(value) ? "" : "a number of MiB above 0";
    }
    if (key == "expandable_segments") {
        return value == "True" || value == "False" || value == "true" || value == "false"
                   ? ""
                   : "True or False";
    }
    if (key == "roundup_power2_divisions") {
        uint64_t n = 0;
        const bool number = std::from_chars(value.data(), value.data() + value.size(), n).ptr ==
                            value.data() + value.size();
        return number && !value.empty() && (n & (n - 1)) == 0 && n <= 64
                   ? ""
                   : "a power of two up to 64 (the per-size list form is not replayed)";
    }
    if (key == "garbage_collection_threshold") {
        const std::string text(value);
        char* end = nullptr;
        const double t = std::strtod(text.c_str(), &end);
        return !text.empty() && end == text.c_str() + text.size() && t > 0 && t < 1
                   ? ""
                   : "a fraction between 0 and 1";
    }
    if (key == "backend") {
        return value == "native" || value == "cudaMallocAsync" ? "" : "native or cudaMallocAsync";
    }
    return "?";
}

std::string knownList() {
    std::string out;
    for (const std::string& k : knownSettingKeys()) {
        out += (out.empty() ? "" : ", ") + k;
    }
    return out;
}

ReplaySetting fromList(const std::string& list) {
    ReplaySetting s;
    s.setting = list;
    s.label = list.empty() ? "default" : list;
    s.rules = AllocatorRules::parse("PYTORCH_CUDA_ALLOC_CONF=" + list);
    return s;
}

} // namespace

const std::vector<std::string>& knownSettingKeys() {
    static const std::vector<std::string> keys = {"max_split_size_mb", "expandable_segments",
                                                  "roundup_power2_divisions",
                                                  "garbage_collection_threshold", "backend"};
    return keys;
}

std::optional<ReplaySetting> parseReplaySetting(std::string_view text, std::string& error) {
    if (text == "default" || text.empty()) {
        return fromList("");
    }
    std::string problem;
    bool any = false;
    AllocatorRules::forEachItem(text, [&](std::string_view key, std::string_view value) {
        any = true;
        if (!problem.empty()) {
            return;
        }
        const auto& keys = knownSettingKeys();
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
            problem = "unknown setting '" + std::string(key) + "' (known: " + knownList() +
                      ", or default)";
        } else if (std::string takes = checkValue(key, value); !takes.empty()) {
            problem = std::string(key) + ":" + std::string(value) + ": " + std::string(key) +
                      " takes " + takes;
        }
    });
    if (problem.empty() && !any) {
        problem = "'" + std::string(text) + "' is not KEY:VALUE (known keys: " + knownList() +
                  ", or default)";
    }
    if (!problem.empty()) {
        error = problem;
        return std::nullopt;
    }
    return fromList(std::string(text));
}

ReplaySetting recordedSetting(const std::string& config, const std::string& backend) {
    // The lines' lists joined: PYTORCH_ALLOC_CONF and PYTORCH_CUDA_ALLOC_CONF may both be set.
    std::string list;
    std::string_view rest = config;
    while (!rest.empty()) {
        const size_t eol = rest.find('\n');
        const std::string_view line = rest.substr(0, eol);
        rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 1);
        const size_t equals = line.find('=');
        if (equals != std::string_view::npos && equals + 1 < line.size()) {
            list += (list.empty() ? "" : ",") + std::string(line.substr(equals + 1));
        }
    }
    ReplaySetting s = fromList(list);
    s.label = "recorded";
    s.recorded = true;
    if (backend == "cudaMallocAsync") {
        s.rules.async_backend = true;
    }
    if (!s.rules.exact) {
        s.not_understood = s.rules.not_understood;
    }
    AllocatorRules::forEachItem(list, [&](std::string_view key, std::string_view value) {
        const auto& keys = knownSettingKeys();
        if (s.not_understood.empty() && !harmless(key) &&
            std::find(keys.begin(), keys.end(), key) == keys.end()) {
            s.not_understood = std::string(key) + ":" + std::string(value);
        }
    });
    return s;
}

std::vector<ReplaySetting> defaultReplaySettings(const ReplaySetting& recorded,
                                                 bool with_capacity) {
    std::vector<ReplaySetting> out = {recorded};
    std::vector<std::string> lists = {"", "expandable_segments:True", "max_split_size_mb:128",
                                      "roundup_power2_divisions:4"};
    if (with_capacity) {
        lists.push_back("garbage_collection_threshold:0.8");
    }
    lists.push_back("backend:cudaMallocAsync");
    for (const std::string& list : lists) {
        // The run's own is listed once.
        if (list != recorded.setting) {
            out.push_back(fromList(list));
        }
    }
    return out;
}

} // namespace gmt::analyzer
