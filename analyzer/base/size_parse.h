// Byte sizes on the command line ("64M", "1.5 GiB", "100MB", "4096") and in messages
// ("12.0 MiB"). What each unit means is gpumemtrace/byte_size.h's: K, M, G, T binary (GPU
// memory is reported in powers of two), KB, MB, GB, TB decimal.
#pragma once

#include <CLI/CLI.hpp>
#include <gpumemtrace/byte_size.h>

#include "base/human_bytes.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gmt::cli {

// The one size syntax, shared with the recorder (gpumemtrace/byte_size.h).
using gmt::parseSize;

// "512 B", "12.0 KiB", "3.5 GiB": the analyzer's humanBytes with one decimal, which is
// enough in a CI verdict.
inline std::string formatBytes(uint64_t bytes) {
    return analyzer::humanBytes(bytes, 1);
}

// A CLI11 transform that rewrites a size into plain bytes, so the option itself can be a
// uint64_t and a bad value is rejected by the parser with the option's name.
CLI::Validator sizeTransform();

// A percentage: "10", "10%", "2.5". Rejects negatives.
CLI::Validator percentTransform();

} // namespace gmt::cli
