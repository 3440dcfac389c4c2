#include "check/leak_gate.h"

#include "base/hex.h"
#include "base/human_time.h"
#include "base/saturating.h"
#include "base/size_parse.h"
#include "views/missing_events_text.h"
#include "views/python_status_text.h"

#include <algorithm>
#include <cstdio>
#include <map>

namespace gmt::cli {

using analyzer::ErrorReport;
using analyzer::LeakSite;
using analyzer::PhaseReport;
using analyzer::Report;

namespace {

std::string plural(uint64_t n, const char* word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

void appendStack(std::vector<DetailLine>& out, const analyzer::Stack& stack,
                 const GateDetail& detail, const char* indent) {
    for (const analyzer::FrameText& f : analyzer::stackText(stack, detail.stacks)) {
        out.push_back({indent + f.what, f.where});
    }
}

// "4.0 MiB in 2 allocations (device, cudaMalloc)".
std::string siteLine(const LeakSite& site) {
    return formatBytes(site.bytes) + " in " + plural(site.allocations, "allocation") + " (" +
           std::string(format::kindName(site.kind)) + ", " + site.api + ")";
}

// The rows of the limited phase; empty when it was never marked.
std::vector<const PhaseReport*> phaseRows(const Report& report, const std::string& name) {
    std::vector<const PhaseReport*> rows;
    for (const PhaseReport& p : report.phases) {
        if (p.name == name) {
            rows.push_back(&p);
        }
    }
    return rows;
}

// The limited phase's row that rose most above its start; null when it was never marked.
const PhaseReport* mostIncreased(const Report& report, const std::string& name) {
    const PhaseReport* top = nullptr;
    for (const PhaseReport* p : phaseRows(report, name)) {
        if (!top || p->peak_above_start_bytes > top->peak_above_start_bytes) {
            top = p;
        }
    }
    return top;
}

CheckOutcome checkPhase(const Report& report, const std::string& name) {
    CheckOutcome out;
    out.name = "phase";
    const auto rows = phaseRows(report, name);
    if (rows.empty()) {
        out.failed = true;
        out.summary = "phase " + name + " was never marked, so its limits cannot hold";
        std::string known;
        for (const PhaseReport& p : report.phases) {
            known += (known.empty() ? "" : ", ") + p.name;
        }
        out.details.push_back({known.empty() ? "the trace has no phase markers "
                                               "(gpumemtrace_mark_phase in gpumemtrace.h)"
                                             : "phases marked: " + known,
                               ""});
        return out;
    }
    uint64_t times = 0, duration = 0;
    for (const PhaseReport* p : rows) {
        times += p->occurrences;
        duration += p->duration_ns;
    }
    out.summary = "phase " + name + ": marked " + plural(times, "time") + ", " +
                  analyzer::humanDuration(duration) + " in all";
    return out;
}

CheckOutcome checkLeaks(const Report& report, const GateLimits& limits, const GateDetail& detail) {
    CheckOutcome out;
    out.name = "leaks";
    const analyzer::LeakScope& scope = report.leak_scope;
    // Leaks that missing events could explain (their free may be among them) do not count:
    // the trace check fails for the missing events instead (evaluateProcess).
    const uint64_t bytes = scope.bytes - std::min(scope.bytes, scope.uncertain_bytes);
    const uint64_t allocations =
        scope.allocations - std::min(scope.allocations, scope.uncertain_allocations);
    const bool over_bytes = bytes > limits.max_leaked_bytes;
    const bool over_count = limits.max_leaks && allocations > *limits.max_leaks;
    out.failed = over_bytes || over_count;
    const std::string in_phase = limits.phase ? " in phase " + *limits.phase : "";
    if (scope.allocations == 0) {
        out.summary = "no leaks" + in_phase;
    } else {
        out.summary = formatBytes(scope.bytes) + " leaked" + in_phase + " in " +
                      plural(scope.allocations, "allocation") + " from " +
                      plural(scope.sites, "site");
    }
    out.summary += " (limit " + formatBytes(limits.max_leaked_bytes);
    if (limits.max_leaks) {
        out.summary += ", " + plural(*limits.max_leaks, "allocation");
    }
    out.summary += ")";
    out.value = scope.bytes;
    out.limit = limits.max_leaked_bytes;
    if (scope.suppressed_bytes > 0 || scope.suppressed_sites > 0) {
        out.summary += "; " + formatBytes(scope.suppressed_bytes) + " suppressed";
    }
    if (scope.uncertain_bytes > 0) {
        out.summary += "; " + formatBytes(scope.uncertain_bytes) +
                       " uncertain (allocated before events went missing), not counted";
    }
    if (report.summary.held_at_exit_bytes > 0) {
        // A cache is not a leak; --count-cached counts it.
        out.summary += "; " + formatBytes(report.summary.held_at_exit_bytes) +
                       " held by caching allocators at exit, not counted";
    }
    uint64_t kept = 0;
    if (report.caching_allocator) {
        for (const analyzer::CachingAllocatorReport& a : report.caching_allocator->processes) {
            analyzer::addSaturating(kept, a.exit_kept.bytes);
        }
    }
    if (kept > 0) {
        // Tensors the interpreter's finalization left allocated (docs/frameworks.md).
        out.summary += "; " + formatBytes(kept) +
                       " of tensors left allocated by the interpreter's exit, not counted";
    }
    size_t shown = 0;
    for (const LeakSite& leak : report.leaks) {
        if (shown == detail.top) {
            break;
        }
        ++shown;
        std::string line = siteLine(leak);
        if (leak.released_by_teardown) {
            line += ", released only by device reset";
        }
        if (leak.uncertain_bytes > 0) {
            line += ", " + formatBytes(leak.uncertain_bytes) + " of it uncertain";
        }
        out.details.push_back({line + " allocated at:", ""});
        appendStack(out.details, leak.stack, detail, "    ");
        out.findings.push_back(
            {"leak", line + " allocated here is never freed", leak.bytes, &leak.stack});
    }
    if (scope.sites > shown) {
        out.details.push_back(
            {"... " + plural(scope.sites - shown, "more site") + " (gpumemtrace report lists them)",
             ""});
    }
    return out;
}

CheckOutcome checkPeak(const Report& report, const GateLimits& limits) {
    CheckOutcome out;
    out.name = "peak";
    uint64_t peak = report.summary.peak_bytes;
    uint64_t when = report.summary.peak_time_ns;
    std::string what = " of device memory at the peak";
    if (limits.phase) {
        peak = 0;
        for (const PhaseReport* p : phaseRows(report, *limits.phase)) {
            if (p->peak_bytes >= peak) {
                peak = p->peak_bytes;
                when = p->peak_time_ns;
            }
        }
        what = " of device memory at the peak of phase " + *limits.phase;
    }
    out.summary = formatBytes(peak) + what;
    out.value = peak;
    out.limit = limits.max_peak_bytes;
    if (limits.max_peak_bytes) {
        out.failed = peak > *limits.max_peak_bytes;
        out.summary += " (limit " + formatBytes(*limits.max_peak_bytes) + ")";
    } else {
        out.summary += " (no limit)";
    }
    if (!out.failed) {
        return out;
    }
    if (limits.phase) {
        uint64_t origin = UINT64_MAX;
        for (const analyzer::ProcessReport& p : report.processes) {
            origin = std::min(origin, p.start_mono_ns);
        }
        out.details.push_back({"reached at " +
                                   analyzer::relativeTime(when, origin == UINT64_MAX ? 0 : origin) +
                                   "; gpumemtrace report shows what held the run's peak",
                               ""});
        return out;
    }
    out.details.push_back({"held at the peak by:", ""});
    for (size_t i = 0; i < report.peak.top_sites.size() && i < 5; ++i) {
        const analyzer::PeakSite& site = report.peak.top_sites[i];
        out.details.push_back(
            {"  " + formatBytes(site.bytes) + " from " + analyzer::siteLabel(site.stack), ""});
        out.findings.push_back({"peak",
                                formatBytes(site.bytes) + " held here at the peak of " +
                                    formatBytes(peak) + " (limit " +
                                    formatBytes(*limits.max_peak_bytes) + ")",
                                site.bytes, &site.stack});
    }
    return out;
}

// With a phase: how far the device memory rose above where each occurrence began.
CheckOutcome checkPeakIncrease(const Report& report, const std::string& phase, uint64_t limit) {
    CheckOutcome out;
    out.name = "peak_increase";
    const PhaseReport* top = mostIncreased(report, phase);
    const uint64_t increase = top ? top->peak_above_start_bytes : 0;
    out.failed = increase > limit;
    out.value = increase;
    out.limit = limit;
    out.summary = formatBytes(increase) + " more device memory at the peak of phase " + phase +
                  " than when it began (limit " + formatBytes(limit) + ")";
    return out;
}

std::string growthLine(const analyzer::GrowthSite& g) {
    char confidence[16];
    std::snprintf(confidence, sizeof confidence, "%.2f", g.confidence);
    return "+" + formatBytes(g.bytes_per_iteration) + " per iteration from iteration " +
           std::to_string(g.first_iteration) + " (grew in " + std::to_string(g.growing_iterations) +
           " of " + std::to_string(g.iterations) + ", confidence " + confidence +
           "), allocated at:";
}

// Where the iterations came from, for the summary.
std::string iterationSource(const Report& report) {
    for (const analyzer::IterationReport& it : report.iterations) {
        const uint64_t measured = it.boundaries > 0 ? it.boundaries - 1 : 0;
        if (it.source == "phase") {
            return plural(measured, "iteration") + " of phase " + it.phase;
        }
        if (it.source == "pattern") {
            return plural(measured, "iteration") + " of the allocation pattern";
        }
        return "no iterations: " + it.note;
    }
    return "no iterations";
}

CheckOutcome checkGrowth(const Report& report, const GateLimits& limits, const GateDetail& detail) {
    CheckOutcome out;
    out.name = "growth";
    const analyzer::GrowthScope& scope = report.growth_scope;
    const std::string in_phase = limits.phase ? " in phase " + *limits.phase : "";
    out.failed = limits.max_growth && scope.bytes_per_iteration > *limits.max_growth;
    out.value = scope.bytes_per_iteration;
    out.limit = limits.max_growth;
    out.summary = scope.sites == 0
                      ? "no growth" + in_phase
                      : formatBytes(scope.bytes_per_iteration) + " more per iteration" + in_phase +
                            " from " + plural(scope.sites, "growing site");
    out.summary +=
        " (" + iterationSource(report) + "; limit " +
        (limits.max_growth ? formatBytes(*limits.max_growth) : "none: --max-growth sets one") + ")";
    size_t shown = 0;
    for (const analyzer::GrowthSite& g : report.growth) {
        if (shown++ == detail.top) {
            break;
        }
        out.details.push_back({growthLine(g), ""});
        appendStack(out.details, g.stack, detail, "    ");
        out.findings.push_back({"growth",
                                "live bytes allocated here grow by " +
                                    formatBytes(g.bytes_per_iteration) + " per iteration",
                                g.bytes_per_iteration, &g.stack});
    }
    return out;
}

CheckOutcome checkErrors(const Report& report, const GateLimits& limits, Suppressions& suppressions,
                         const GateDetail& detail) {
    CheckOutcome out;
    out.name = "errors";
    uint64_t count = 0, suppressed = 0, uncertain = 0, listed_uncertain = 0;
    std::map<std::string, uint64_t> by_type;
    for (const ErrorReport& e : report.errors) {
        listed_uncertain += e.uncertain ? 1 : 0;
        if (suppressions.matchError(e)) {
            ++suppressed;
            continue;
        }
        if (e.uncertain) {
            // Missing events could explain it: listed by `report`, never counted here.
            ++uncertain;
            continue;
        }
        const std::string type(analyzer::errorTypeName(e.type));
        ++count;
        ++by_type[type];
        if (count > detail.top) {
            continue;
        }
        std::string line = type + ": " + e.api + "(" + analyzer::hex(e.address) + ")";
        if (!e.detail.empty()) {
            line += ": " + e.detail;
        }
        out.details.push_back({line + " at:", ""});
        appendStack(out.details, e.stack, detail, "    ");
        out.findings.push_back({type, line, 0, &e.stack});
        if (!e.allocation_stack.empty()) {
            out.details.push_back({"  allocated at:", ""});
            appendStack(out.details, e.allocation_stack, detail, "    ");
        }
    }
    // Past the listed errors (the analysis keeps 1000 per process) nothing can be
    // matched against a suppression: they count.
    const uint64_t unlisted_all =
        report.summary.errors - std::min<uint64_t>(report.summary.errors, report.errors.size());
    const uint64_t unlisted_uncertain =
        std::min(unlisted_all, report.summary.uncertain_errors -
                                   std::min(report.summary.uncertain_errors, listed_uncertain));
    uncertain += unlisted_uncertain;
    const uint64_t unlisted = unlisted_all - unlisted_uncertain;
    if (unlisted > 0) {
        count += unlisted;
        by_type["unlisted"] += unlisted;
    }
    if (count > detail.top) {
        out.details.push_back({"... " + plural(count - detail.top, "more error"), ""});
    }
    out.failed = limits.fail_on_errors && count > 0;
    out.value = count;
    if (limits.fail_on_errors) {
        out.limit = 0;
    }
    if (count == 0) {
        out.summary = "no errors";
    } else {
        out.summary = plural(count, "error") + ":";
        for (const auto& [type, n] : by_type) {
            out.summary += " " + std::to_string(n) + " " + type;
        }
    }
    if (!limits.fail_on_errors) {
        out.summary += " (not failing: --no-fail-on-errors)";
    }
    if (suppressed > 0) {
        out.summary += "; " + std::to_string(suppressed) + " suppressed";
    }
    if (uncertain > 0) {
        out.summary += "; " + std::to_string(uncertain) +
                       " uncertain (missing events could explain them), not counted";
    }
    return out;
}

} // namespace

std::string stableName(const ProcessVerdict& v) {
    // A command line can be long (a test runner's arguments): its start names it.
    constexpr size_t kMaxCommand = 200;
    std::string name = v.command.empty() ? "(unknown command)" : v.command;
    if (name.size() > kMaxCommand) {
        name = name.substr(0, kMaxCommand) + "...";
    }
    if (v.rank) {
        name += " rank " + std::to_string(*v.rank);
    }
    return name;
}

bool ProcessVerdict::failed() const {
    return std::any_of(checks.begin(), checks.end(),
                       [](const CheckOutcome& c) { return c.failed; });
}

ProcessVerdict evaluateProcess(const Report& report, const GateLimits& limits,
                               Suppressions& suppressions, const GateDetail& detail) {
    ProcessVerdict v;
    CheckOutcome incomplete;
    std::vector<std::string> reasons;
    const analyzer::ProcessReport* missing = nullptr; // the first process missing events
    for (const analyzer::ProcessReport& p : report.processes) {
        v.duration_s += static_cast<double>(p.duration_ns) / 1e9;
        // A snapshot's running process (docs/live.md) has no end yet: not incomplete.
        if (!p.complete && !p.running.value_or(false)) {
            reasons.push_back(p.incomplete_reason.value_or(""));
        }
        if (p.missing_events && !missing) {
            missing = &p;
        }
    }
    if (report.processes.size() == 1) {
        const analyzer::ProcessReport& p = report.processes.front();
        v.pid = p.pid;
        v.rank = p.rank;
        v.host = p.host;
        v.command = p.command;
        v.trace_file = p.trace_file;
    } else if (!report.processes.empty()) {
        v.command = plural(report.processes.size(), "process");
        v.trace_file = report.processes.front().trace_file + ", ...";
    }
    if (!reasons.empty() || missing) {
        // An incomplete trace says nothing of what came after its valid part; one with
        // events missing cannot say whether its leaks and errors are real. Either fails
        // rather than passing unseen, unless allowed.
        incomplete.name = "trace";
        incomplete.failed = !limits.allow_incomplete;
        if (!reasons.empty()) {
            const std::string& reason = reasons.front();
            incomplete.summary = "incomplete" + (reason.empty() ? "" : " (" + reason + ")");
            incomplete.details.push_back({"the checks cover the valid part only; what was live "
                                          "when it stopped counts as leaked",
                                          ""});
        }
        if (missing) {
            const analyzer::MissingEventsReport& m = *missing->missing_events;
            incomplete.summary += (incomplete.summary.empty() ? "" : "; ") +
                                  std::string("events missing (") + analyzer::missingEventsText(m) +
                                  ")";
            if (!m.gaps.empty()) {
                incomplete.details.push_back(
                    {"first gap: " + analyzer::gapText(m.gaps.front(), missing->start_mono_ns),
                     ""});
            }
            incomplete.details.push_back(
                {"leaks and errors that the missing events could explain are uncertain: they "
                 "are reported but not counted against the limits (" +
                     formatBytes(report.summary.uncertain_leaked_bytes) + " leaked, " +
                     plural(report.summary.uncertain_errors, "error") + ")",
                 ""});
        }
        incomplete.summary += limits.allow_incomplete ? " (allowed: --allow-incomplete)" : "";
    }
    if (report.summary.failed_allocations > 0) {
        v.notes.push_back(plural(report.summary.failed_allocations, "allocation") +
                          " failed (see gpumemtrace report for the diagnosis)");
    }
    for (const analyzer::ProcessReport& p : report.processes) {
        // A Python program whose stacks have no Python frames: say why, once, so a reader
        // of native-only stacks knows they are all there is.
        if (p.python && p.python->status != format::PythonStatus::Captured) {
            v.notes.push_back(analyzer::pythonRuntimeText(*p.python));
        }
    }
    if (limits.phase) {
        v.checks.push_back(checkPhase(report, *limits.phase));
    }
    v.checks.push_back(checkLeaks(report, limits, detail));
    v.checks.push_back(checkPeak(report, limits));
    if (limits.phase && limits.max_peak_increase) {
        v.checks.push_back(checkPeakIncrease(report, *limits.phase, *limits.max_peak_increase));
    }
    // Growth is a check when it is limited or found (then, without a limit, it never fails).
    if (limits.max_growth || report.growth_scope.sites > 0) {
        v.checks.push_back(checkGrowth(report, limits, detail));
    }
    v.checks.push_back(checkErrors(report, limits, suppressions, detail));
    if (!incomplete.name.empty()) {
        v.checks.push_back(std::move(incomplete));
    }
    return v;
}

std::optional<uint64_t> peakIncreaseTime(const Report& report, const std::string& phase) {
    const PhaseReport* top = mostIncreased(report, phase);
    if (!top || top->peak_above_start_bytes == 0 || top->peak_above_start_time_ns == 0) {
        return std::nullopt;
    }
    return top->peak_above_start_time_ns;
}

void addPeakIncreaseHolders(ProcessVerdict& verdict, const Report& then, const GateDetail& detail) {
    for (CheckOutcome& c : verdict.checks) {
        if (c.name != "peak_increase" || !c.failed) {
            continue;
        }
        if (then.leaks.empty()) {
            c.details.push_back({"nothing allocated in the phase was held then (the increase is "
                                 "memory freed before it and allocated again outside it)",
                                 ""});
            return;
        }
        c.details.push_back({"held then by what the phase had allocated:", ""});
        size_t shown = 0;
        for (const LeakSite& site : then.leaks) {
            if (shown++ == detail.top) {
                break;
            }
            const std::string line = siteLine(site);
            c.details.push_back({"  " + line + " allocated at:", ""});
            appendStack(c.details, site.stack, detail, "      ");
            c.findings.push_back(
                {"peak", line + " held here at the phase's peak", site.bytes, &site.stack});
        }
        if (then.leak_scope.sites > shown) {
            c.details.push_back(
                {"  ... " + plural(then.leak_scope.sites - shown, "more site"), ""});
        }
        return;
    }
}

} // namespace gmt::cli
