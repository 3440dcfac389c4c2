#include "diff/report_diff.h"

#include "base/saturating.h"
#include "base/size_parse.h"
#include "views/frame_text.h"
#include "views/styled_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>

namespace gmt::cli {

namespace {

using analyzer::Report;

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

std::map<int64_t, std::pair<std::string, uint64_t>> devicePeaks(const Report& report) {
    std::map<int64_t, std::pair<std::string, uint64_t>> out;
    for (const analyzer::DeviceReport& d : report.devices) {
        out[d.ordinal] = {d.name, d.peak_bytes};
    }
    return out;
}

struct Site {
    std::string label;
    uint64_t bytes = 0;
};

std::map<std::string, Site> leakSites(const Report& report) {
    std::map<std::string, Site> out;
    for (const analyzer::LeakSite& leak : report.leaks) {
        const std::string key =
            std::string(format::kindName(leak.kind)) + "\n" + analyzer::siteKey(leak.stack);
        Site& s = out[key];
        if (s.label.empty()) {
            s.label = analyzer::siteLabel(leak.stack);
        }
        analyzer::addSaturating(s.bytes, leak.bytes);
    }
    return out;
}

uint64_t kindPeak(const Report& report, format::Kind kind) {
    for (const analyzer::KindReport& k : report.kinds) {
        if (k.kind == kind) {
            return k.peak_bytes;
        }
    }
    return 0;
}

} // namespace

ReportDiff diffReports(const Report& base, const Report& now, const DiffLimits& limits) {
    ReportDiff d;
    d.peak.push_back({"total", base.summary.peak_bytes, now.summary.peak_bytes});
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
    for (format::Kind kind : analyzer::kReportedKinds) {
        const uint64_t b = kindPeak(base, kind), n = kindPeak(now, kind);
        if (b || n) {
            d.peak.push_back({"kind " + std::string(format::kindName(kind)), b, n});
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

    DiffRow total{"total", base.summary.leaked_bytes, now.summary.leaked_bytes};
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

    d.counts.push_back({"failed allocations", base.summary.failed_allocations,
                        now.summary.failed_allocations, false});
    d.counts.push_back({"errors", base.summary.errors, now.summary.errors, false});
    d.counts.push_back({"growth per iteration", base.growth_scope.bytes_per_iteration,
                        now.growth_scope.bytes_per_iteration, true});
    return d;
}

std::string renderDiff(const ReportDiff& diff, const std::string& base_name,
                       const std::string& new_name, const analyzer::TextStyle& style) {
    using analyzer::Tone;
    analyzer::StyledText out(style);
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
    auto columns = [](const std::string& base, const std::string& now, const std::string& delta) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "  %12s %12s %22s  ", base.c_str(), now.c_str(),
                      delta.c_str());
        return std::string(buf);
    };
    auto line = [&](const DiffRow& r) {
        const Tone tone = r.over ? Tone::Bad : r.now > r.base ? Tone::Warn : Tone::Plain;
        out.line({{columns(value(r, r.base), value(r, r.now), change(r)), tone},
                  {r.over ? "OVER LIMIT  " : "", Tone::Bad},
                  {r.label, Tone::Plain, true}});
    };
    out.line("base: " + base_name);
    out.line("new:  " + new_name);
    out.blank();
    out.line({{"peak", Tone::Heading}, {columns("base", "new", "change").substr(4), Tone::Dim}});
    for (const DiffRow& r : diff.peak) {
        line(r);
    }
    out.line("leaked bytes (total, then sites that changed)", Tone::Heading);
    for (const DiffRow& r : diff.leaks) {
        line(r);
    }
    out.line("counts", Tone::Heading);
    for (const DiffRow& r : diff.counts) {
        line(r);
    }
    return out.str();
}

} // namespace gmt::cli
