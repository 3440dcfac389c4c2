// Byte sizes as people write them: "4096", "64M", "1GiB". Shared by the recorder, which
// reads GPUMEMTRACE_BUFFER_SIZE, and the CLI, whose options set it and set limits, so the
// two can never disagree on what a size means. Binary multiples only: GPU memory is
// allocated and reported in powers of two, and "1G" meaning 10^9 would surprise anyone
// comparing a limit with a report.
#pragma once

#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace gmt {

// Digits followed by nothing, B, K/KiB/KB, M/MiB/MB or G/GiB/GB (case-insensitive, one
// space allowed; K = KiB = 1024). nullopt for anything else, including overflow.
inline std::optional<uint64_t> parseSize(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
        text.remove_suffix(1);
    }
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end == text.data()) {
        return std::nullopt;
    }
    std::string suffix(end, text.data() + text.size());
    for (char& c : suffix) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (!suffix.empty() && suffix.front() == ' ') {
        suffix.erase(0, 1);
    }
    int shift = 0;
    if (suffix.empty() || suffix == "b") {
        shift = 0;
    } else if (suffix == "k" || suffix == "kib" || suffix == "kb") {
        shift = 10;
    } else if (suffix == "m" || suffix == "mib" || suffix == "mb") {
        shift = 20;
    } else if (suffix == "g" || suffix == "gib" || suffix == "gb") {
        shift = 30;
    } else {
        return std::nullopt;
    }
    if (value > (std::numeric_limits<uint64_t>::max() >> shift)) {
        return std::nullopt;
    }
    return value << shift;
}

} // namespace gmt
