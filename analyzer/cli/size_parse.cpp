#include "size_parse.h"

#include <cctype>
#include <charconv>
#include <cstdio>
#include <limits>

namespace gmt::cli {

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return out;
}

} // namespace

std::optional<uint64_t> parseSize(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
        text.remove_suffix(1);
    }
    uint64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end == text.data()) {
        return std::nullopt;
    }
    std::string suffix = lower(std::string_view(end, text.data() + text.size() - end));
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

std::string formatBytes(uint64_t bytes) {
    static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024) {
        return std::to_string(bytes) + " B";
    }
    double v = static_cast<double>(bytes) / 1024;
    size_t unit = 0;
    while (v >= 1024 && unit + 1 < std::size(kUnits)) {
        v /= 1024;
        ++unit;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
    return buf;
}

CLI::Validator sizeTransform() {
    return CLI::Validator(
        [](std::string& value) -> std::string {
            auto bytes = parseSize(value);
            if (!bytes) {
                return "'" + value + "' is not a size (use bytes or K, M, G, KiB, MiB, GiB)";
            }
            value = std::to_string(*bytes);
            return {};
        },
        "SIZE");
}

CLI::Validator percentTransform() {
    return CLI::Validator(
        [](std::string& value) -> std::string {
            std::string v = value;
            if (!v.empty() && v.back() == '%') {
                v.pop_back();
            }
            char* end = nullptr;
            double pct = std::strtod(v.c_str(), &end);
            if (v.empty() || *end != '\0' || !(pct >= 0)) {
                return "'" + value + "' is not a percentage (e.g. 10 or 10%)";
            }
            value = v;
            return {};
        },
        "PCT");
}

} // namespace gmt::cli
