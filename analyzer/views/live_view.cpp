#include "views/live_view.h"

#include "base/human_bytes.h"
#include "base/human_time.h"
#include "base/plural.h"
#include "views/frame_text.h"
#include "views/paused_text.h"

#include <algorithm>
#include <cstdio>

namespace gmt::analyzer {

namespace {

std::string share(uint64_t part, uint64_t whole) {
    char buf[32];
    std::snprintf(buf, sizeof buf, " (%.1f%%)",
                  100.0 * static_cast<double>(part) / static_cast<double>(whole));
    return buf;
}

// The growth since the last frame, "+1.00 MiB" / "-2.00 MiB"; empty when unchanged or new.
std::string change(const LiveSiteBytes* previous, const std::pair<uint64_t, uint64_t>& key,
                   uint64_t bytes) {
    if (!previous) {
        return {};
    }
    auto it = previous->find(key);
    const uint64_t before = it == previous->end() ? 0 : it->second;
    if (before == bytes) {
        return {};
    }
    return bytes > before ? "  +" + humanBytes(bytes - before) : "  -" + humanBytes(before - bytes);
}

// The last `n` entries of `list` that are of process `pid`, in order.
template <typename T>
std::vector<const T*> latestOf(const std::vector<T>& list, uint64_t pid, size_t n) {
    std::vector<const T*> mine;
    for (const T& entry : list) {
        if (entry.pid == pid) {
            mine.push_back(&entry);
        }
    }
    mine.erase(mine.begin(), mine.end() - static_cast<std::ptrdiff_t>(std::min(n, mine.size())));
    return mine;
}

class LiveView {
  public:
    LiveView(const LiveViewOptions& options, const LiveSiteBytes* previous, LiveSiteBytes& current,
             const TextStyle& style)
        : options_(options), previous_(previous), current_(current), out_(style) {}

    std::string render(const std::vector<LiveSource>& sources) {
        out_.line({{"gpumemtrace top", Tone::Heading},
                   {"  " + utcTime(options_.now_wall_ns) +
                        (options_.refresh.empty() ? "" : "  " + options_.refresh),
                    Tone::Dim}});
        for (const LiveSource& s : sources) {
            out_.blank();
            if (!s.report) {
                out_.line({{s.name + ": ", Tone::Strong}, {s.error, Tone::Bad}});
                continue;
            }
            for (const ProcessReport& p : s.report->processes) {
                process(*s.report, p);
            }
        }
        return out_.str();
    }

  private:
    void process(const Report& r, const ProcessReport& p) {
        const bool running = p.running.value_or(false);
        std::string state = running ? "running" : "ended";
        if (!running && p.exit_signal) {
            state += " (signal " + std::to_string(*p.exit_signal) + ")";
        } else if (!running && !p.complete) {
            state += " without a trailer (killed?)";
        }
        out_.line({{"pid " + std::to_string(p.pid) + " ", Tone::Strong},
                   {state, running ? Tone::Good : Tone::Warn},
                   {"  " + p.command, Tone::Plain, true}});
        out_.line("  " + p.trace_file + ": " + plural(p.events, "event") + " over " +
                      humanDuration(p.duration_ns),
                  Tone::Dim);
        if (p.paused) {
            out_.line("  " + pausedText(*p.paused), Tone::Warn);
        }
        for (const DeviceReport& d : r.devices) {
            std::string text = "  device " + std::to_string(d.ordinal) +
                               (d.name.empty() ? "" : " " + d.name) + ": live " +
                               humanBytes(d.leaked_bytes) + ", peak " + humanBytes(d.peak_bytes);
            if (d.total_bytes > 0) {
                text += " of " + humanBytes(d.total_bytes) + share(d.peak_bytes, d.total_bytes);
            }
            out_.line(text);
        }
        if (r.summary.held_at_exit_bytes > 0) {
            out_.line("  held by caching allocators (their cache): " +
                      humanBytes(r.summary.held_at_exit_bytes));
        }
        growth(r, p.pid);
        sites(r, p.pid);
        failures(r, p.pid);
        errors(r, p.pid);
    }

    void growth(const Report& r, uint64_t pid) {
        for (const IterationReport& it : r.iterations) {
            if (it.pid != pid || it.boundaries < 2) {
                continue;
            }
            const std::string by = it.source == "phase" ? "phase " + it.phase : it.source;
            out_.line({{"  growth: ", Tone::Plain},
                       {humanBytes(it.growth_bytes_per_iteration) + " per iteration",
                        it.growth_bytes_per_iteration > 0 ? Tone::Bad : Tone::Good},
                       {" over " + plural(it.boundaries - 1, "iteration") + " (" + by + "), " +
                            plural(it.growing_sites, "growing site"),
                        Tone::Plain}});
        }
        size_t shown = 0;
        for (const GrowthSite& g : r.growth) {
            if (g.pid == pid && shown++ < options_.recent) {
                out_.line(
                    {{"    +" + humanBytes(g.bytes_per_iteration) + "/iteration  ", Tone::Bad},
                     {siteLabel(g.stack), Tone::Plain, true}});
            }
        }
    }

    void sites(const Report& r, uint64_t pid) {
        struct Row {
            uint64_t bytes, allocations, stack_id;
            const Stack* stack;
            bool cache;
        };
        std::vector<Row> rows;
        for (const LeakSite& l : r.leaks) {
            if (l.pid == pid) {
                rows.push_back({l.bytes, l.allocations, l.stack_id, &l.stack, false});
            }
        }
        for (const HeldReport& h : r.held_at_exit) {
            for (const HeldSite& s : h.top_sites) {
                if (h.pid == pid) {
                    rows.push_back({s.bytes, s.allocations, s.stack_id, &s.stack, true});
                }
            }
        }
        if (rows.empty()) {
            out_.line("  nothing live", Tone::Dim);
            return;
        }
        std::stable_sort(rows.begin(), rows.end(),
                         [](const Row& a, const Row& b) { return a.bytes > b.bytes; });
        out_.line("  live by site:", Tone::Heading);
        for (size_t i = 0; i < rows.size() && i < options_.sites; ++i) {
            const Row& row = rows[i];
            const auto key = std::make_pair(pid, row.stack_id);
            current_[key] = row.bytes;
            const std::string grew = change(previous_, key, row.bytes);
            char bytes[24];
            std::snprintf(bytes, sizeof bytes, "%12s", humanBytes(row.bytes).c_str());
            out_.line({{"  " + std::string(bytes), Tone::Strong},
                       {grew, Tone::Bad},
                       {"  " + plural(row.allocations, "allocation") + "  ", Tone::Dim},
                       {siteLabel(*row.stack) + (row.cache ? " (caching allocator)" : ""),
                        Tone::Plain, true}});
        }
    }

    void failures(const Report& r, uint64_t pid) {
        const auto latest = latestOf(r.failures, pid, options_.recent);
        if (latest.empty()) {
            return;
        }
        out_.line("  failed allocations: " + std::to_string(r.summary.failed_allocations) +
                      ", the latest:",
                  Tone::Bad);
        for (const FailureReport* f : latest) {
            out_.line({{"    " + f->api + " " + humanBytes(f->requested_bytes) + ": " + f->error +
                            " (live " + humanBytes(f->live_bytes) + ")  ",
                        Tone::Plain},
                       {siteLabel(f->stack), Tone::Plain, true}});
        }
    }

    void errors(const Report& r, uint64_t pid) {
        const auto latest = latestOf(r.errors, pid, options_.recent);
        if (latest.empty()) {
            return;
        }
        out_.line("  errors: " + std::to_string(r.summary.errors) + ", the latest:", Tone::Bad);
        for (const ErrorReport* e : latest) {
            out_.line(
                {{"    " + std::string(errorTypeName(e->type)) + " " + e->api + "  ", Tone::Plain},
                 {siteLabel(e->stack), Tone::Plain, true}});
        }
    }

    const LiveViewOptions& options_;
    const LiveSiteBytes* previous_;
    LiveSiteBytes& current_;
    StyledText out_;
};

} // namespace

std::string renderLiveView(const std::vector<LiveSource>& sources, const LiveViewOptions& options,
                           const LiveSiteBytes* previous, LiveSiteBytes& current,
                           const TextStyle& style) {
    return LiveView(options, previous, current, style).render(sources);
}

} // namespace gmt::analyzer
