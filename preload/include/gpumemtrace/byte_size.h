// Byte sizes as people write them: "4096", "64M", "1.5 GiB", "100MB". Shared by the
// recorder, which reads GPUMEMTRACE_BUFFER_SIZE, and the CLI, whose options set it and set
// limits, so the two can never disagree on what a size means. K, M, G, T and KiB … TiB are
// binary (GPU memory is allocated and reported in powers of two, and a limit of "1G" is
// compared with reports in GiB); KB, MB, GB, TB are decimal, as the SI says, for sizes
// copied from a vendor's sheet. docs/configuration.md says the same.
#pragma once

#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace gmt {

// Digits, optionally a fraction (".5", at most 9 digits), then nothing or B, K/KiB, M/MiB,
// G/GiB, T/TiB (binary) or KB, MB, GB, TB (decimal), case-insensitive, one space allowed.
// A fraction is rounded down to whole bytes. nullopt for anything else, including
// overflow.
inline std::optional<uint64_t> parseSize(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
        text.remove_suffix(1);
    }
    const char* const last = text.data() + text.size();
    uint64_t whole = 0;
    auto [end, ec] = std::from_chars(text.data(), last, whole);
    if (ec != std::errc() || end == text.data()) {
        return std::nullopt;
    }
    uint64_t fraction = 0; // the fraction's digits as an integer, over `scale`
    uint64_t scale = 1;
    if (end != last && *end == '.') {
        const char* digits = ++end;
        while (end != last && std::isdigit(static_cast<unsigned char>(*end))) {
            if (end - digits == 9) {
                return std::nullopt; // more precision than a byte count needs
            }
            fraction = fraction * 10 + static_cast<uint64_t>(*end - '0');
            scale *= 10;
            ++end;
        }
        if (end == digits) {
            return std::nullopt; // "1." is not a number
        }
    }
    std::string suffix(end, last);
    for (char& c : suffix) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (!suffix.empty() && suffix.front() == ' ') {
        suffix.erase(0, 1);
    }
    struct Unit {
        const char* names[2];
        uint64_t bytes;
    };
    constexpr uint64_t KiB = 1024;
    constexpr Unit kUnits[] = {
        {{"", "b"}, 1},
        {{"k", "kib"}, KiB},
        {{"m", "mib"}, KiB * KiB},
        {{"g", "gib"}, KiB * KiB * KiB},
        {{"t", "tib"}, KiB * KiB * KiB * KiB},
        {{"kb", "kb"}, 1000},
        {{"mb", "mb"}, 1000 * 1000},
        {{"gb", "gb"}, 1000 * 1000 * 1000},
        {{"tb", "tb"}, 1000ull * 1000 * 1000 * 1000},
    };
    uint64_t unit = 0;
    for (const Unit& u : kUnits) {
        if (suffix == u.names[0] || suffix == u.names[1]) {
            unit = u.bytes;
        }
    }
    if (unit == 0) {
        return std::nullopt;
    }
    constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
    if (whole > kMax / unit) {
        return std::nullopt;
    }
    // fraction × unit / scale, rounded down, without overflow: with unit = q·scale + r,
    // fraction·q < unit <= 2^40 (fraction < scale) and fraction·r < scale² <= 10^18.
    const uint64_t part = (fraction * (unit / scale)) + (fraction * (unit % scale)) / scale;
    const uint64_t bytes = whole * unit;
    if (part > kMax - bytes) {
        return std::nullopt;
    }
    return bytes + part;
}

} // namespace gmt
