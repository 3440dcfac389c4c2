#include "report_diff.h"

#include "json_fields.h"
#include "size_parse.h"
#include "stack_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

namespace gmt::cli {

namespace {

uint64_t num(const Json& j, const char* key) {
    return jsonCount(j, key);
}

const Json& member(const Json& j, const char* key) {
    return jsonMember(j, key);
}

double growthPct(uint64_t base, uint64_t now) {
    if (now <= base) {
        return 0;
    }
    if (base == 0) {
        return std::numeric_limits<double>::infinity();
    }
    return 100.0 * static_cast<double>(now - base) / static_cast<double>(base);
}

std::string pctText(double pct) {
    if (std::isinf(pct)) {
        return "new";
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", pct);
    return buf;
}

std::map<int64_t, std::pair<std::string, uint64_t>> devicePeaks(const Json& report) {
    std::map<int64_t, std::pair<std::string, uint64_t>> out;
    const Json& devices = member(report, "devices");
    if (devices.is_array()) {
        for (const Json& d : devices) {
            auto name = d.find("name");
            out[d.value("ordinal", int64_t{-1})] = {
                name != d.end() && name->is_string() ? name->get<std::string>() : "",
                num(d, "peak_bytes")};
        }
    }
    return out;
}

struct Site {
    std::string label;
    uint64_t bytes = 0;
};

std::map<std::string, Site> leakSites(const Json& report) {
    std::map<std::string, Site> out;
    const Json& leaks = member(report, "leaks");
    if (!leaks.is_array()) {
        return out;
    }
    for (const Json& leak : leaks) {
        const Json& stack = member(leak, "stack");
        auto kind = leak.find("kind");
        std::string key =
            (kind != leak.end() && kind->is_string() ? kind->get<std::string>() : std::string()) +
            "\n" + siteKey(stack);
        Site& s = out[key];
        if (s.label.empty()) {
            s.label = siteLabel(stack);
        }
        s.bytes += num(leak, "bytes");
    }
    return out;
}

} // namespace

ReportDiff diffReports(const Json& base, const Json& now, const DiffLimits& limits) {
    ReportDiff d;
    d.peak.push_back({"total", num(member(base, "summary"), "peak_bytes"),
                      num(member(now, "summary"), "peak_bytes")});
    auto base_devices = devicePeaks(base), new_devices = devicePeaks(now);
    std::map<int64_t, std::string> ordinals;
    for (const auto& [o, v] : base_devices) {
        ordinals[o] = v.first;
    }
    for (const auto& [o, v] : new_devices) {
        ordinals[o] = v.first;
    }
    for (const auto& [o, name] : ordinals) {
        d.peak.push_back({"device " + std::to_string(o) + (name.empty() ? "" : " (" + name + ")"),
                          base_devices[o].second, new_devices[o].second});
    }
    std::map<std::string, bool> kinds;
    for (const Json* r : {&base, &now}) {
        const Json& k = member(*r, "kinds");
        if (k.is_object()) {
            for (const auto& [name, v] : k.items()) {
                kinds[name] = true;
            }
        }
    }
    for (const auto& [kind, unused] : kinds) {
        uint64_t b = num(member(member(base, "kinds"), kind.c_str()), "peak_bytes");
        uint64_t n = num(member(member(now, "kinds"), kind.c_str()), "peak_bytes");
        if (b || n) {
            d.peak.push_back({"kind " + kind, b, n});
        }
    }
    if (limits.max_peak_growth_pct) {
        for (DiffRow& row : d.peak) {
            double pct = growthPct(row.base, row.now);
            if (pct > *limits.max_peak_growth_pct) {
                row.over = true;
                d.violations.push_back("peak " + row.label + " grew " + pctText(pct) + " (" +
                                       formatBytes(row.base) + " -> " + formatBytes(row.now) +
                                       "), limit " + pctText(*limits.max_peak_growth_pct));
            }
        }
    }

    DiffRow total{"total", num(member(base, "summary"), "leaked_bytes"),
                  num(member(now, "summary"), "leaked_bytes")};
    if (limits.max_leak_growth && total.now > total.base &&
        total.now - total.base > *limits.max_leak_growth) {
        total.over = true;
        d.violations.push_back("leaked bytes grew by " + formatBytes(total.now - total.base) +
                               " (" + formatBytes(total.base) + " -> " + formatBytes(total.now) +
                               "), limit " + formatBytes(*limits.max_leak_growth));
    }
    d.leaks.push_back(total);
    auto base_sites = leakSites(base), new_sites = leakSites(now);
    std::vector<DiffRow> sites;
    for (const auto& [key, s] : new_sites) {
        auto b = base_sites.find(key);
        uint64_t before = b == base_sites.end() ? 0 : b->second.bytes;
        if (before != s.bytes) {
            sites.push_back({s.label, before, s.bytes});
        }
    }
    for (const auto& [key, s] : base_sites) {
        if (!new_sites.count(key)) {
            sites.push_back({s.label, s.bytes, 0});
        }
    }
    std::sort(sites.begin(), sites.end(), [](const DiffRow& a, const DiffRow& b) {
        auto delta = [](const DiffRow& r) {
            return static_cast<int64_t>(r.now) - static_cast<int64_t>(r.base);
        };
        return delta(a) != delta(b) ? delta(a) > delta(b) : a.label < b.label;
    });
    d.leaks.insert(d.leaks.end(), sites.begin(), sites.end());

    d.counts.push_back({"failed allocations", num(member(base, "summary"), "failed_allocations"),
                        num(member(now, "summary"), "failed_allocations"), false});
    d.counts.push_back({"errors", num(member(base, "summary"), "errors"),
                        num(member(now, "summary"), "errors"), false});
    return d;
}

std::string renderDiff(const ReportDiff& diff, const std::string& base_name,
                       const std::string& new_name) {
    std::ostringstream out;
    auto value = [](const DiffRow& r, uint64_t v) {
        return r.bytes ? formatBytes(v) : std::to_string(v);
    };
    auto change = [&](const DiffRow& r) {
        if (r.now == r.base) {
            return std::string("=");
        }
        std::string delta =
            r.now > r.base ? "+" + value(r, r.now - r.base) : "-" + value(r, r.base - r.now);
        if (r.bytes && r.base > 0) {
            char buf[32];
            std::snprintf(buf, sizeof buf, " (%+.1f%%)",
                          100.0 * (static_cast<double>(r.now) - static_cast<double>(r.base)) /
                              static_cast<double>(r.base));
            delta += buf;
        }
        return delta;
    };
    auto line = [&](const DiffRow& r) {
        char buf[256];
        std::snprintf(buf, sizeof buf, "  %12s %12s %22s  %s%s\n", value(r, r.base).c_str(),
                      value(r, r.now).c_str(), change(r).c_str(), r.over ? "OVER LIMIT  " : "",
                      r.label.c_str());
        out << buf;
    };
    out << "base: " << base_name << "\nnew:  " << new_name << "\n\n";
    char header[128];
    std::snprintf(header, sizeof header, "  %12s %12s %22s  %s\n", "base", "new", "change", "");
    out << "peak" << header + 4;
    for (const DiffRow& r : diff.peak) {
        line(r);
    }
    out << "leaked bytes (total, then sites that changed)\n";
    for (const DiffRow& r : diff.leaks) {
        line(r);
    }
    out << "counts\n";
    for (const DiffRow& r : diff.counts) {
        line(r);
    }
    return out.str();
}

} // namespace gmt::cli
