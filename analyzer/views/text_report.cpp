#include "views/text_report.h"

#include "base/hex.h"
#include "base/human_bytes.h"
#include "base/human_time.h"
#include "base/plural.h"
#include "base/saturating.h"
#include "views/missing_events_text.h"
#include "views/paused_text.h"
#include "views/python_status_text.h"

#include <algorithm>
#include <cstdio>

namespace gmt::analyzer {

namespace {

std::string percent(uint64_t part, uint64_t whole) {
    char buf[32];
    const double p = 100.0 * static_cast<double>(part) / static_cast<double>(whole);
    std::snprintf(buf, sizeof buf,
                  p < 0.01 && part > 0 ? "<0.01%%"
                  : p < 10             ? "%.2f%%"
                                       : "%.0f%%",
                  p);
    return buf;
}

std::string bytesOr(const std::optional<uint64_t>& v) {
    return v ? humanBytes(*v) : std::string("unknown");
}

class TextReport {
  public:
    TextReport(const Report& r, const TextStyle& style) : r_(r), out_(style) {
        origin_ = UINT64_MAX;
        for (const ProcessReport& p : r.processes) {
            origin_ = std::min(origin_, p.start_mono_ns);
        }
        if (origin_ == UINT64_MAX) {
            origin_ = 0;
        }
        many_ = r.processes.size() > 1;
    }

    std::string render() {
        if (r_.snapshot) {
            // What is live in a running process is not leaked yet: said first, and the
            // figures below say "live now" instead.
            out_.line("gpumemtrace snapshot (" + r_.generator + ")", Tone::Heading);
            const uint64_t running = r_.snapshot->running;
            out_.line("  taken " + utcTime(r_.snapshot->time_wall_ns) + " while " +
                      std::to_string(running) +
                      (running == 1 ? " process was" : " processes were") +
                      " running: what is listed as live is live now, not leaked");
        } else {
            out_.line("gpumemtrace report (" + r_.generator + ")", Tone::Heading);
        }
        out_.blank();
        processes();
        summary();
        leaks();
        held();
        peak();
        ranks();
        caching();
        phases();
        growth();
        fragmentation();
        failures();
        errors();
        return out_.str();
    }

  private:
    std::string at(uint64_t t) const { return relativeTime(t, origin_); }
    // In a snapshot of running processes what is still held is live now, not leaked.
    std::string leakedLabel() const { return r_.snapshot ? ", live now " : ", leaked "; }
    // " (pid N)" when the report covers several processes.
    std::string pidNote(uint64_t pid) const {
        return many_ ? " (pid " + std::to_string(pid) + ")" : std::string();
    }
    void heading(const std::string& text) {
        out_.blank();
        out_.line(text, Tone::Heading);
    }

    void processes() {
        for (const ProcessReport& p : r_.processes) {
            std::vector<Segment> title{{"process " + std::to_string(p.pid), Tone::Strong},
                                       {"  " + p.command, Tone::Plain}};
            if (p.command_truncated) {
                // The note must survive a narrow terminal: the command gives way first.
                title.back().shrink = true;
                title.push_back({" … (command line truncated)", Tone::Warn});
            }
            out_.line(std::move(title));
            std::vector<Segment> trace{
                {"  trace ", Tone::Plain},
                {p.trace_file, Tone::Plain},
                {": " + plural(p.events, "event") + " in " + humanDuration(p.duration_ns),
                 Tone::Plain}};
            if (p.dropped_events > 0) {
                trace.push_back(
                    {", " + std::to_string(p.dropped_events) + " events DROPPED", Tone::Bad});
            }
            out_.line(std::move(trace));
            if (p.python) {
                out_.line("  " + pythonRuntimeText(*p.python),
                          p.python->status == format::PythonStatus::Captured ? Tone::Plain
                                                                             : Tone::Warn);
            }
            if (p.exit_signal) {
                out_.line("  the process died of signal " + std::to_string(*p.exit_signal) +
                              " (its trace is complete)",
                          Tone::Warn);
            }
            // A running process's trace has no end yet, and may end in a frame being
            // written: normal, said by the line on its running below.
            if (!p.complete && !p.running.value_or(false)) {
                out_.line({{"  INCOMPLETE trace: ", Tone::Bad},
                           {p.incomplete_reason.value_or("") + " (valid log ends at offset " +
                                std::to_string(p.valid_log_end_offset.value_or(0)) +
                                "); analysed up to its last valid record",
                            Tone::Plain}});
            }
            if (p.missing_events) {
                missingEvents(*p.missing_events);
            }
            if (p.running) {
                out_.line(*p.running ? "  still running (its trace is being written)"
                                     : "  not running any more",
                          Tone::Plain);
            }
            if (p.paused) {
                out_.line("  " + pausedText(*p.paused), Tone::Warn);
            }
            if (p.aggregate) {
                aggregated(*p.aggregate);
            }
        }
    }

    // What an aggregated trace kept and what it gave up (docs/configuration.md).
    void aggregated(const AggregateReport& a) {
        out_.line("  AGGREGATED trace: " + std::to_string(a.events) + " events recorded, " +
                  std::to_string(a.kept_events) + " kept; " + std::to_string(a.folded_allocations) +
                  " allocations and caching-allocator blocks (" + humanBytes(a.folded_bytes) +
                  ") folded into per-site totals. No event-level timeline or per-event "
                  "exports, and iterations only from phase marks (not from the allocation "
                  "pattern); leaks, peak, growth across marked iterations and failures are "
                  "exact, at the tensor level too");
        if (a.over_budget > 0) {
            out_.line({{"  OVER BUDGET: ", Tone::Bad},
                       {std::to_string(a.over_budget) + " events did not fit a checkpoint of " +
                            humanBytes(a.budget_bytes) +
                            ": leaks and peak may be incomplete (raise "
                            "GPUMEMTRACE_AGGREGATE_BUDGET)",
                        Tone::Plain}});
        }
        if (a.folded_errors > 0 || a.folded_phases > 0) {
            out_.line("  " + std::to_string(a.folded_errors) + " error events and " +
                          std::to_string(a.folded_phases) +
                          " phase marks past the recorder's bound were only counted",
                      Tone::Warn);
        }
    }

    // How many events are missing and where: the first gaps, each by its sequence
    // positions and the events around it.
    void missingEvents(const MissingEventsReport& m) {
        out_.line(
            {{"  MISSING EVENTS: ", Tone::Bad},
             {missingEventsText(m) + "; leaks and errors they could explain are marked uncertain",
              Tone::Plain}});
        constexpr size_t kShownGaps = 5;
        for (size_t i = 0; i < m.gaps.size() && i < kShownGaps; ++i) {
            out_.line("    lost: " + gapText(m.gaps[i], origin_));
        }
        const uint64_t shown = std::min<uint64_t>(m.gaps.size(), kShownGaps);
        if (m.gap_count > shown) {
            out_.line("    ... and " + plural(m.gap_count - shown, "more gap"));
        }
    }

    // What suppression rules took out of the leaked figures, rule by rule: known one-time
    // allocations (the built-in rules) or what the user's file names.
    void suppressed() {
        const LeakScope& scope = r_.leak_scope;
        if (scope.suppressed_sites == 0) {
            return;
        }
        out_.line("  suppressed (not leaks): " + humanBytes(scope.suppressed_bytes) + " in " +
                  plural(scope.suppressed_allocations, "allocation"));
        for (const SuppressionReport& s : r_.suppressions) {
            out_.line("    " + humanBytes(s.bytes) + " in " + plural(s.allocations, "allocation") +
                      " by " + s.rule +
                      (s.origin == "built-in" ? " (built-in: --print-builtin-suppressions says why)"
                                              : " (" + s.origin + ")"));
        }
    }

    void summary() {
        const Summary& s = r_.summary;
        heading("Summary");
        out_.line("  allocations " + std::to_string(s.allocations) + ", frees " +
                  std::to_string(s.frees) + ", failed allocations " +
                  std::to_string(s.failed_allocations) + ", errors " + std::to_string(s.errors));
        std::vector<Segment> leaked{
            {r_.snapshot ? "  live now " : "  leaked ", Tone::Plain},
            {humanBytes(s.leaked_bytes), s.leaked_bytes ? Tone::Bad : Tone::Good},
            {" in " + plural(s.leaked_allocations, "allocation"), Tone::Plain}};
        if (s.uncertain_leaked_bytes > 0) {
            leaked.push_back(
                {" (" + humanBytes(s.uncertain_leaked_bytes) + " uncertain: events are missing)",
                 Tone::Warn});
        }
        if (s.uncertain_errors > 0) {
            leaked.push_back(
                {"; " + plural(s.uncertain_errors, "error") + " uncertain", Tone::Warn});
        }
        out_.line(std::move(leaked));
        suppressed();
        if (s.held_at_exit_bytes > 0) {
            // A snapshot's caches hold it now; the process has not exited.
            out_.line(std::string("  held by caching allocators ") +
                      (r_.snapshot ? "now" : "at exit") +
                      " (not leaks): " + humanBytes(s.held_at_exit_bytes) + " in " +
                      plural(s.held_at_exit_allocations, "allocation"));
        }
        out_.line({{"  peak ", Tone::Plain},
                   {humanBytes(s.peak_bytes), Tone::Strong},
                   {" of device memory at " + at(s.peak_time_ns), Tone::Plain}});
        for (const DeviceReport& d : r_.devices) {
            out_.line({{"  device " + std::to_string(d.ordinal) + " ", Tone::Plain},
                       {d.name, Tone::Plain},
                       {": peak " + humanBytes(d.peak_bytes) + " of " + humanBytes(d.total_bytes) +
                            leakedLabel() + humanBytes(d.leaked_bytes),
                        Tone::Plain}});
        }
        for (const KindReport& k : r_.kinds) {
            if (k.allocations > 0) {
                out_.line("  " + std::string(format::kindName(k.kind)) + ": " +
                          plural(k.allocations, "allocation") + ", peak " +
                          humanBytes(k.peak_bytes) + leakedLabel() + humanBytes(k.leaked_bytes) +
                          ", largest " + humanBytes(k.largest_allocation_bytes));
            }
        }
    }

    void leaks() {
        if (r_.leaks.empty()) {
            return;
        }
        const LeakScope& scope = r_.leak_scope;
        const std::string what = r_.snapshot ? "Live now" : "Leaks";
        heading(scope.phase ? what + " allocated in phase " + *scope.phase + " (largest first)"
                            : what + " (largest first)");
        size_t i = 0;
        for (const LeakSite& l : r_.leaks) {
            std::vector<Segment> line{
                {"  #" + std::to_string(++i) + " ", Tone::Plain},
                {humanBytes(l.bytes), Tone::Bad},
                {" in " + plural(l.allocations, "allocation") + ", " +
                     std::string(format::kindName(l.kind)) + " via " + l.api +
                     (l.kind == format::Kind::Block ? " (tensor level: still allocated at exit)"
                                                    : "") +
                     pidNote(l.pid),
                 Tone::Plain}};
            if (l.released_by_teardown) {
                line.push_back({" (released only by device reset / context destroy, never freed)",
                                Tone::Warn});
            }
            if (l.uncertain_bytes > 0) {
                line.push_back({" (" + humanBytes(l.uncertain_bytes) +
                                    " uncertain: allocated before events went missing)",
                                Tone::Warn});
            }
            out_.line(std::move(line));
            out_.stack(l.stack, "      ");
        }
        uint64_t listed_bytes = 0;
        for (const LeakSite& l : r_.leaks) {
            addSaturating(listed_bytes, l.bytes);
        }
        if (scope.sites > r_.leaks.size()) {
            out_.line("  ... " + plural(scope.sites - r_.leaks.size(), "more site") + " with " +
                          humanBytes(scope.bytes - std::min(scope.bytes, listed_bytes)) +
                          " (--top lists more)",
                      Tone::Dim);
        }
    }

    // A cache is not a leak: what each caching allocator still held, and where it got it.
    void held() {
        if (r_.held_at_exit.empty()) {
            return;
        }
        heading("Held by caching allocators at exit (their cache, not leaks)");
        for (const HeldReport& h : r_.held_at_exit) {
            out_.line(
                {{"  " + h.allocator + ": ", Tone::Plain},
                 {humanBytes(h.bytes), Tone::Strong},
                 {" in " + plural(h.allocations, "allocation") + pidNote(h.pid), Tone::Plain}});
            for (const HeldSite& site : h.top_sites) {
                out_.line("    " + humanBytes(site.bytes) + " in " +
                          plural(site.allocations, "allocation") + ", " +
                          std::string(format::kindName(site.kind)) + " via " + site.api);
                out_.stack(site.stack, "      ");
            }
            if (h.sites > h.top_sites.size()) {
                out_.line("    ... " + plural(h.sites - h.top_sites.size(), "more site"),
                          Tone::Dim);
            }
        }
    }

    void peak() {
        const PeakReport& p = r_.peak;
        // With a caching allocator's events the report has two levels: say which this is.
        heading("Peak " + humanBytes(p.bytes) + " at " + at(p.time_ns) +
                (r_.caching_allocator ? " (segment level: memory taken from CUDA), held by"
                                      : ", held by"));
        for (const PeakSite& site : p.top_sites) {
            out_.line({{"  ", Tone::Plain},
                       {humanBytes(site.bytes), Tone::Strong},
                       {" in " + plural(site.allocations, "allocation") + pidNote(site.pid),
                        Tone::Plain}});
            out_.stack(site.stack, "      ");
        }
    }

    // The tensor level (docs/frameworks.md): the caching allocator's own figures.
    // One ExitBlocks figure of the tensor level, with its sites (nothing when empty).
    void exitBlocks(const std::string& what, const ExitBlocks& e) {
        if (e.bytes == 0) {
            return;
        }
        out_.line("  " + what + ": " + humanBytes(e.bytes) + " in " + plural(e.blocks, "block"),
                  Tone::Warn);
        for (const HeldSite& site : e.top_sites) {
            out_.line("    " + humanBytes(site.bytes) + " in " + plural(site.allocations, "block") +
                      " allocated at");
            out_.stack(site.stack, "      ");
        }
    }

    void caching() {
        if (!r_.caching_allocator) {
            return;
        }
        const CachingReport& c = r_.caching_allocator.value();
        for (const CachingAllocatorReport& a : c.processes) {
            heading("Tensor level: " + a.allocator + (a.version.empty() ? "" : " " + a.version) +
                    pidNote(a.pid));
            if (a.status != "attached") {
                out_.line("  no block events (" + a.status + ": " + a.detail +
                              "); every figure above is at the segment level",
                          Tone::Warn);
                continue;
            }
            for (const CachingDeviceReport& d : a.devices) {
                out_.line(
                    {{"  device " + std::to_string(d.device) + ": allocated peak ", Tone::Plain},
                     {humanBytes(d.allocated_peak_bytes), Tone::Strong},
                     {" at " + at(d.allocated_peak_time_ns) +
                          " (tensor level, max_memory_allocated), reserved peak " +
                          humanBytes(d.reserved_peak_bytes) + " at " + at(d.reserved_peak_time_ns) +
                          " (segment level, max_memory_reserved); " +
                          plural(d.allocations, "block") + " allocated, " +
                          std::to_string(d.frees) + " freed",
                      Tone::Plain}});
            }
            if (!a.sizes_exact) {
                out_.line("  block sizes are estimates for " + plural(a.estimated_blocks, "block") +
                              " (settings or events the rules could not place)",
                          Tone::Warn);
            }
            exitBlocks("freed only by the interpreter at exit (still referenced when the "
                       "program ended)",
                       a.exit_freed);
            exitBlocks("still allocated after the interpreter finalized (not collected at "
                       "exit)",
                       a.exit_kept);
        }
        if (c.tensor_peak.bytes > 0) {
            heading("Tensor-level peak " + humanBytes(c.tensor_peak.bytes) + " at " +
                    at(c.tensor_peak.time_ns) + ", held by");
            for (const PeakSite& site : c.tensor_peak.top_sites) {
                out_.line({{"  ", Tone::Plain},
                           {humanBytes(site.bytes), Tone::Strong},
                           {" in " + plural(site.allocations, "block") + pidNote(site.pid),
                            Tone::Plain}});
                out_.stack(site.stack, "      ");
            }
        }
        for (const InsideSegmentsReport& m : c.fragmentation) {
            space("  inside the segments at the tensor-level peak, device " +
                      std::to_string(m.device) + pidNote(m.pid) +
                      (m.exact ? "" : " (measured at an earlier peak)") + ": ",
                  m);
        }
        for (const CachingOomReport& o : c.ooms) {
            heading("Out of memory in the caching allocator at " + at(o.time_ns) + pidNote(o.pid));
            out_.line({{"  " + humanBytes(o.requested_bytes) + " asked for on device " +
                            std::to_string(o.device) + ": ",
                        Tone::Plain},
                       {o.diagnosis, o.fragmentation ? Tone::Warn : Tone::Bad}});
            space("  inside the segments then: ", o.space);
            for (const OomHint& h : o.hints) {
                out_.line(
                    {{"    " + h.remedy + ": ", Tone::Strong},
                     {h.verdict + (h.estimate ? " (estimate)" : "") + " — " + h.why, Tone::Plain}});
            }
            out_.stack(o.stack, "      ");
        }
    }

    void space(const std::string& prefix, const InsideSegmentsReport& m) {
        out_.line(prefix + humanBytes(m.reserved_unallocated_bytes) +
                  " reserved but unallocated (" + humanBytes(m.reserved_bytes) + " reserved, " +
                  humanBytes(m.allocated_bytes) + " allocated), " +
                  plural(m.inactive_split_blocks, "split free block") + " (" +
                  humanBytes(m.inactive_split_bytes) + "), largest free block " +
                  humanBytes(m.largest_free_bytes) + " in " + plural(m.segment_count, "segment"));
        for (const StreamSpaceReport& st : m.streams) {
            out_.line("      stream " + hex(st.stream) + ": " + humanBytes(st.free_bytes) +
                          " free of " + humanBytes(st.reserved_bytes) + ", largest free block " +
                          humanBytes(st.largest_free_bytes),
                      Tone::Dim);
        }
    }

    void phases() {
        if (r_.phases.empty()) {
            return;
        }
        heading("Phases (gpumemtrace_mark_phase, gpumemtrace_push_phase, NVTX ranges)");
        char head[160];
        std::snprintf(head, sizeof head, "  %-20s %6s %8s %11s %8s %11s %11s", "phase", "times",
                      "allocs", "allocated", "frees", "peak", "leaked");
        out_.line(head, Tone::Dim);
        for (const PhaseReport& p : r_.phases) {
            char row[160];
            std::snprintf(row, sizeof row, " %6llu %8llu %11s %8llu %11s %11s",
                          static_cast<unsigned long long>(p.occurrences),
                          static_cast<unsigned long long>(p.allocations),
                          humanBytes(p.allocated_bytes).c_str(),
                          static_cast<unsigned long long>(p.frees),
                          humanBytes(p.peak_bytes).c_str(), humanBytes(p.leaked_bytes).c_str());
            // Nested phases are indented under the phase they are in.
            std::string name = std::string(2 * (p.path.empty() ? 0 : p.path.size() - 1), ' ') +
                               p.name + pidNote(p.pid);
            if (name.size() < 20) {
                name.resize(20, ' ');
            }
            out_.line({{"  ", Tone::Plain},
                       {name, Tone::Plain, true},
                       {row, p.leaked_bytes ? Tone::Warn : Tone::Plain}});
        }
    }

    void ranks() {
        if (r_.ranks.size() >= 2) {
            out_.blank();
            writeRankTable(out_, r_.ranks);
        }
    }

    // Where iterations begin, then what grows across them.
    void growth() {
        bool any = false;
        for (const IterationReport& it : r_.iterations) {
            if (it.source == "none") {
                continue;
            }
            if (!any) {
                heading("Growth across iterations");
                any = true;
            }
            const uint64_t measured = it.boundaries > 0 ? it.boundaries - 1 : 0;
            std::string where = it.source == "phase" ? "each time phase " + it.phase + " began"
                                                     : "each allocation at " + siteLabel(it.stack) +
                                                           " (the repeating allocation pattern)";
            out_.line("  iterations" + pidNote(it.pid) + ": " + plural(measured, "iteration") +
                          ", beginning " + where,
                      Tone::Dim);
            if (it.growing_sites == 0) {
                out_.line({{"  no allocation site grows", Tone::Good}});
            }
        }
        if (!any) {
            return;
        }
        size_t i = 0;
        for (const GrowthSite& g : r_.growth) {
            char confidence[16];
            std::snprintf(confidence, sizeof confidence, "%.2f", g.confidence);
            std::string what = " per iteration from iteration " +
                               std::to_string(g.first_iteration) + " (grew in " +
                               std::to_string(g.growing_iterations) + " of " +
                               std::to_string(g.iterations) + ", confidence " + confidence + "), " +
                               humanBytes(g.live_bytes) + " live at the last" + pidNote(g.pid);
            if (!g.phase.empty()) {
                what += ", in phase " + g.phase.back();
            }
            out_.line({{"  #" + std::to_string(++i) + " +", Tone::Plain},
                       {humanBytes(g.bytes_per_iteration), Tone::Bad},
                       {what, Tone::Plain}});
            out_.stack(g.stack, "      ");
        }
        const GrowthScope& scope = r_.growth_scope;
        if (scope.sites > r_.growth.size()) {
            out_.line("  ... " + plural(scope.sites - r_.growth.size(), "more growing site") +
                          " (--top lists more)",
                      Tone::Dim);
        }
    }

    // Holes relative to what matters: a few MiB of holes on an 80 GiB device are harmless
    // whatever their spread; the same bytes in a program that holds little are not.
    void fragmentation() {
        bool any = false;
        size_t failure_rows = 0;
        for (const FragmentationReport& f : r_.fragmentation) {
            if (f.moment == Moment::Failure) {
                ++failure_rows;
                continue;
            }
            if (!any) {
                heading("Fragmentation (free holes inside the granules and VMM reservations in "
                        "use)");
                any = true;
            }
            std::string when = (f.moment == Moment::Peak ? "  at the peak (" : "  at the end (") +
                               at(f.time_ns) + "), device " + std::to_string(f.device) +
                               pidNote(f.pid) + ": ";
            if (f.hole_bytes == 0) {
                out_.line(when + "no holes");
                continue;
            }
            std::string size = humanBytes(f.hole_bytes) + " free in " +
                               plural(f.hole_count, "hole") + ", largest " +
                               humanBytes(f.largest_hole_bytes);
            std::string relative;
            if (f.device_total_bytes) {
                relative += percent(f.hole_bytes, f.device_total_bytes) + " of the device";
            }
            if (f.live_bytes) {
                // Past twice what is in use, a multiple reads better than a percentage.
                char times[32];
                std::snprintf(times, sizeof times, "%.0fx",
                              static_cast<double>(f.hole_bytes) /
                                  static_cast<double>(f.live_bytes));
                relative += (relative.empty() ? "" : ", ") +
                            (f.hole_bytes >= 2 * f.live_bytes
                                 ? std::string(times)
                                 : percent(f.hole_bytes, f.live_bytes) + " of") +
                            " the " + humanBytes(f.live_bytes) + " in use";
            }
            if (!relative.empty()) {
                size += " (" + relative + ")";
            }
            if (!f.exact) {
                size += ", measured at an earlier peak";
            }
            // Holes worth a look: at least 1% of the device (or of what is in use when
            // the device's size is unknown).
            const uint64_t whole = f.device_total_bytes ? f.device_total_bytes : f.live_bytes;
            const bool notable = whole == 0 || f.hole_bytes * 100 >= whole;
            out_.line({{when, Tone::Plain}, {size, notable ? Tone::Warn : Tone::Plain}});
            for (size_t i = 0; i < f.pinning.size() && i < 3; ++i) {
                const PinReport& pin = f.pinning[i];
                out_.line("      " + humanBytes(pin.bytes) + " " +
                          std::string(format::kindName(pin.kind)) + " allocation (" + pin.api +
                          ") alone keeps " + humanBytes(pin.pinned_bytes) +
                          " of granules from being freed, allocated at");
                out_.stack(pin.stack, "          ");
            }
            if (f.pinning.size() > 3) {
                out_.line("      ... " + plural(f.pinning.size() - 3, "more pinning allocation"),
                          Tone::Dim);
            }
        }
        if (failure_rows > 0 && any) {
            out_.line("  (at each failed allocation: the largest hole is under Failed allocations)",
                      Tone::Dim);
        }
    }

    void failures() {
        if (r_.failures.empty()) {
            return;
        }
        heading("Failed allocations");
        for (const FailureReport& f : r_.failures) {
            out_.line({{"  " + at(f.time_ns) + " " + f.api + "(" + humanBytes(f.requested_bytes) +
                            ") -> ",
                        Tone::Plain},
                       {f.error, Tone::Bad},
                       {pidNote(f.pid), Tone::Plain}});
            out_.line("    " + f.diagnosis);
            out_.line("    live then " + humanBytes(f.live_bytes) + ", driver free " +
                          bytesOr(f.device_free_bytes) + ", largest hole " +
                          bytesOr(f.largest_hole_bytes),
                      Tone::Dim);
            out_.stack(f.stack, "      ");
        }
    }

    void errors() {
        if (r_.errors.empty()) {
            return;
        }
        heading("Errors");
        for (const ErrorReport& e : r_.errors) {
            out_.line({{"  " + std::string(e.uncertain ? "(uncertain) " : ""), Tone::Warn},
                       {std::string(errorTypeName(e.type)), e.uncertain ? Tone::Warn : Tone::Bad},
                       {": " + e.api + "(" + hex(e.address) + ") at " + at(e.time_ns) +
                            pidNote(e.pid) + ": " + e.detail,
                        Tone::Plain}});
            out_.stack(e.stack, "      ");
            if (!e.allocation_stack.empty()) {
                out_.line("    allocated at");
                out_.stack(e.allocation_stack, "      ");
            }
        }
    }

    const Report& r_;
    StyledText out_;
    uint64_t origin_ = 0;
    bool many_ = false;
};

} // namespace

void writeRankTable(StyledText& out, const std::vector<RankRow>& ranks) {
    if (ranks.size() < 2) {
        return;
    }
    out.line("Ranks (own figures; ! marks a rank above the others' median)", Tone::Heading);
    char head[200];
    std::snprintf(head, sizeof head, "  %5s  %-14s %8s  %-22s %11s %11s %8s %7s", "rank", "host",
                  "pid", "peak per device", "leaked", "growth/it", "failed", "errors");
    out.line(head, Tone::Dim);
    size_t outliers = 0;
    for (const RankRow& row : ranks) {
        auto mark = [&](const char* figure) {
            return std::find(row.outlier.begin(), row.outlier.end(), figure) != row.outlier.end()
                       ? "!"
                       : " ";
        };
        std::string devices;
        for (const auto& [device, bytes] : row.device_peaks) {
            devices +=
                (devices.empty() ? "" : " ") + std::to_string(device) + ":" + humanBytes(bytes);
        }
        if (devices.empty()) {
            devices = "-";
        }
        char line[300];
        std::snprintf(
            line, sizeof line, "  %5lld  %-14.14s %8llu  %-21s%s %10s%s %10s%s %7llu%s %6llu%s",
            static_cast<long long>(row.rank), row.host.c_str(),
            static_cast<unsigned long long>(row.pid), devices.c_str(), mark("peak"),
            humanBytes(row.leaked_bytes).c_str(), mark("leaked"),
            humanBytes(row.growth_bytes_per_iteration).c_str(), mark("growth"),
            static_cast<unsigned long long>(row.failed_allocations), mark("failed_allocations"),
            static_cast<unsigned long long>(row.errors), mark("errors"));
        outliers += row.outlier.empty() ? 0 : 1;
        out.line(line, row.outlier.empty() ? Tone::Plain : Tone::Bad);
    }
    if (outliers > 0) {
        std::string which;
        for (const RankRow& row : ranks) {
            if (!row.outlier.empty()) {
                std::string figures;
                for (const std::string& f : row.outlier) {
                    figures += (figures.empty() ? "" : ", ") + f;
                }
                which += (which.empty() ? "" : "; ") + std::string("rank ") +
                         std::to_string(row.rank) + " (" + figures + ")";
            }
        }
        out.line("  outliers: " + which, Tone::Bad);
    }
}

std::string renderText(const Report& report, const TextStyle& style) {
    return TextReport(report, style).render();
}

} // namespace gmt::analyzer
