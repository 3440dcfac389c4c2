#include "cli/gpu_capacity.h"

#include "base/size_parse.h"

#include <cctype>

namespace gmt::cli {

namespace {

struct NamedGpu {
    const char* name;
    uint64_t gib;
};

// The documented memory of common GPUs (docs/whatif.md has the same table).
constexpr NamedGpu kGpus[] = {
    {"T4", 16},        {"V100-16GB", 16}, {"V100-32GB", 32},   {"A10", 24},
    {"A10G", 24},      {"L4", 24},        {"RTX3090", 24},     {"RTX4090", 24},
    {"A100-40GB", 40}, {"L40S", 48},      {"RTX6000-ADA", 48}, {"A100-80GB", 80},
    {"H100-80GB", 80}, {"H100-94GB", 94}, {"H200", 141},       {"B200", 180},
};

// Names compare without case, dashes, underscores or spaces: "a100 40gb" is A100-40GB.
std::string folded(std::string_view s) {
    std::string out;
    for (const char c : s) {
        if (c != '-' && c != '_' && c != ' ') {
            out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        }
    }
    return out;
}

} // namespace

std::optional<uint64_t> parseCapacity(std::string_view text) {
    const std::string key = folded(text);
    for (const NamedGpu& g : kGpus) {
        if (folded(g.name) == key) {
            return g.gib << 30;
        }
    }
    const auto bytes = parseSize(text);
    if (bytes && *bytes > 0) {
        return bytes;
    }
    return std::nullopt;
}

std::string namedGpus() {
    std::string out;
    for (const NamedGpu& g : kGpus) {
        out += (out.empty() ? "" : ", ") + std::string(g.name);
    }
    return out;
}

} // namespace gmt::cli
