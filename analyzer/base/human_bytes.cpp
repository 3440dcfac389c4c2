#include "base/human_bytes.h"

#include "base/saturating.h"

#include <cstdio>

namespace gmt::analyzer {

std::string humanBytes(uint64_t bytes, int decimals) {
    static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    if (bytes == kSaturated) {
        // A sum that reached the limit (base/saturating.h): the true figure is larger.
        return "at least 16 EiB (saturated)";
    }
    char buf[32];
    if (bytes < 1024) {
        std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
        return buf;
    }
    double v = static_cast<double>(bytes);
    int unit = 0;
    while (v >= 1024 && unit < 5) {
        v /= 1024;
        ++unit;
    }
    std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, kUnits[unit]);
    return buf;
}

} // namespace gmt::analyzer
