#include "base/size_parse.h"

#include <string>

namespace gmt::cli {

CLI::Validator sizeTransform() {
    return CLI::Validator(
        [](std::string& value) -> std::string {
            auto bytes = parseSize(value);
            if (!bytes) {
                return "'" + value +
                       "' is not a size (use bytes, K/KiB, M/MiB, G/GiB, T/TiB (binary) or KB, MB, "
                       "GB, TB (decimal), e.g. 1.5G)";
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
