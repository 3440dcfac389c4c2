#include "base/human_time.h"

#include <cstdio>
#include <ctime>

namespace gmt::analyzer {

std::string humanDuration(uint64_t ns) {
    if (ns < 1000) {
        return std::to_string(ns) + " ns";
    }
    struct Unit {
        double ns;
        const char* name;
    };
    static const Unit kUnits[] = {{1e3, "\u00b5s"}, {1e6, "ms"}, {1e9, "s"}, {60e9, "min"}};
    const double v = static_cast<double>(ns);
    const Unit* unit = &kUnits[0];
    for (const Unit& u : kUnits) {
        if (v >= u.ns) {
            unit = &u;
        }
    }
    const double x = v / unit->ns;
    char buf[48];
    // 3 significant digits; rounding 9.995 up to "10.0" is fine.
    std::snprintf(buf, sizeof buf,
                  x < 10    ? "%.2f %s"
                  : x < 100 ? "%.1f %s"
                            : "%.0f %s",
                  x, unit->name);
    return buf;
}

std::string utcTime(uint64_t wall_ns) {
    const time_t seconds = static_cast<time_t>(wall_ns / 1000000000u);
    struct tm t {};
    gmtime_r(&seconds, &t);
    char buf[48];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &t);
    return buf;
}

std::string relativeTime(uint64_t time_ns, uint64_t origin_ns) {
    return time_ns >= origin_ns ? "+" + humanDuration(time_ns - origin_ns)
                                : "-" + humanDuration(origin_ns - time_ns);
}

} // namespace gmt::analyzer
