#include "leak_gate.h"

#include "json_fields.h"
#include "size_parse.h"
#include "stack_text.h"

#include <map>

namespace gmt::cli {

namespace {

uint64_t num(const Json& j, const char* key) {
    return jsonCount(j, key);
}

std::string str(const Json& j, const char* key) {
    return jsonString(j, key);
}

const Json& arrayOf(const Json& j, const char* key) {
    static const Json kEmpty = Json::array();
    const Json& member = jsonMember(j, key);
    return member.is_array() ? member : kEmpty;
}

std::string plural(uint64_t n, const char* word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

void appendStack(std::vector<std::string>& out, const Json& stack, size_t frames,
                 const char* indent) {
    for (const std::string& line : stackLines(stack, frames)) {
        out.push_back(indent + line);
    }
}

CheckOutcome checkLeaks(const Json& report, const GateLimits& limits, Suppressions& suppressions,
                        const GateDetail& detail) {
    CheckOutcome out;
    out.name = "leaks";
    uint64_t bytes = 0, allocations = 0, sites = 0, suppressed_bytes = 0;
    std::vector<const Json*> shown;
    for (const Json& leak : arrayOf(report, "leaks")) {
        uint64_t b = num(leak, "bytes"), a = num(leak, "allocations");
        if (suppressions.matchLeak(jsonMember(leak, "stack"), b, a)) {
            suppressed_bytes += b;
            continue;
        }
        bytes += b;
        allocations += a;
        ++sites;
        if (shown.size() < detail.top) {
            shown.push_back(&leak);
        }
    }
    bool over_bytes = bytes > limits.max_leaked_bytes;
    bool over_count = limits.max_leaks && allocations > *limits.max_leaks;
    out.failed = over_bytes || over_count;
    if (allocations == 0) {
        out.summary = "no leaks";
    } else {
        out.summary = formatBytes(bytes) + " leaked in " + plural(allocations, "allocation") +
                      " from " + plural(sites, "site");
    }
    out.summary += " (limit " + formatBytes(limits.max_leaked_bytes);
    if (limits.max_leaks) {
        out.summary += ", " + plural(*limits.max_leaks, "allocation");
    }
    out.summary += ")";
    if (suppressed_bytes > 0) {
        out.summary += "; " + formatBytes(suppressed_bytes) + " suppressed";
    }
    for (const Json* leak : shown) {
        std::string line = formatBytes(num(*leak, "bytes")) + " in " +
                           plural(num(*leak, "allocations"), "allocation") + " (" +
                           str(*leak, "kind") + ", " + str(*leak, "api") + ")";
        auto teardown = leak->find("released_by_teardown");
        if (teardown != leak->end() && teardown->is_boolean() && teardown->get<bool>()) {
            line += ", released only by device reset";
        }
        out.details.push_back(line + " allocated at:");
        appendStack(out.details, jsonMember(*leak, "stack"), detail.frames, "    ");
    }
    if (sites > shown.size()) {
        out.details.push_back("... " + plural(sites - shown.size(), "more site") +
                              " (gpumemtrace report lists them all)");
    }
    return out;
}

CheckOutcome checkPeak(const Json& report, const GateLimits& limits) {
    CheckOutcome out;
    out.name = "peak";
    const Json& summary = jsonMember(report, "summary");
    uint64_t peak = num(summary, "peak_bytes");
    out.summary = formatBytes(peak) + " of device memory at the peak";
    if (limits.max_peak_bytes) {
        out.failed = peak > *limits.max_peak_bytes;
        out.summary += " (limit " + formatBytes(*limits.max_peak_bytes) + ")";
    } else {
        out.summary += " (no limit)";
    }
    if (out.failed && report.contains("peak")) {
        const Json& sites = arrayOf(jsonMember(report, "peak"), "top_sites");
        out.details.push_back("held at the peak by:");
        for (size_t i = 0; i < sites.size() && i < 5; ++i) {
            out.details.push_back("  " + formatBytes(num(sites[i], "bytes")) + " from " +
                                  siteLabel(jsonMember(sites[i], "stack")));
        }
    }
    return out;
}

CheckOutcome checkErrors(const Json& report, const GateLimits& limits, Suppressions& suppressions,
                         const GateDetail& detail) {
    CheckOutcome out;
    out.name = "errors";
    uint64_t count = 0, suppressed = 0;
    std::map<std::string, uint64_t> by_type;
    for (const Json& e : arrayOf(report, "errors")) {
        const Json& stack = jsonMember(e, "stack");
        const Json& allocation = jsonMember(e, "allocation_stack");
        if (suppressions.matchError(stack, allocation)) {
            ++suppressed;
            continue;
        }
        ++count;
        ++by_type[str(e, "type")];
        if (count > detail.top) {
            continue;
        }
        std::string line = str(e, "type") + ": " + str(e, "api") + "(" + str(e, "address") + ")";
        if (!str(e, "detail").empty()) {
            line += ": " + str(e, "detail");
        }
        out.details.push_back(line + " at:");
        appendStack(out.details, stack, detail.frames, "    ");
        if (allocation.is_array() && !allocation.empty()) {
            out.details.push_back("  allocated at:");
            appendStack(out.details, allocation, detail.frames, "    ");
        }
    }
    if (count > detail.top) {
        out.details.push_back("... " + plural(count - detail.top, "more error"));
    }
    out.failed = limits.fail_on_errors && count > 0;
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
    return out;
}

} // namespace

bool ProcessVerdict::failed() const {
    for (const CheckOutcome& c : checks) {
        if (c.failed) {
            return true;
        }
    }
    return false;
}

ProcessVerdict evaluateProcess(const Json& report, const GateLimits& limits,
                               Suppressions& suppressions, const GateDetail& detail) {
    ProcessVerdict v;
    CheckOutcome incomplete;
    const Json& processes = arrayOf(report, "processes");
    if (!processes.empty()) {
        const Json& p = processes.front();
        v.pid = num(p, "pid");
        v.command = str(p, "command");
        v.trace_file = str(p, "trace_file");
        v.duration_s = static_cast<double>(num(p, "duration_ns")) / 1e9;
        auto complete = p.find("complete");
        if (complete != p.end() && complete->is_boolean() && !complete->get<bool>()) {
            std::string reason = str(p, "incomplete_reason");
            incomplete.name = "trace";
            incomplete.failed = !limits.allow_incomplete;
            incomplete.summary = "incomplete" + (reason.empty() ? "" : " (" + reason + ")");
            incomplete.summary += limits.allow_incomplete ? " (allowed: --allow-incomplete)" : "";
            incomplete.details.push_back("the checks cover the valid part only; what was live "
                                         "when it stopped counts as leaked");
        }
        if (uint64_t dropped = num(p, "dropped_events")) {
            v.notes.push_back(plural(dropped, "event") +
                              " dropped (GPUMEMTRACE_ON_FULL=drop): numbers are a lower bound");
        }
    }
    const Json& failures = arrayOf(report, "failures");
    if (!failures.empty()) {
        v.notes.push_back(plural(failures.size(), "allocation") +
                          " failed (see gpumemtrace report for the diagnosis)");
    }
    v.checks.push_back(checkLeaks(report, limits, suppressions, detail));
    v.checks.push_back(checkPeak(report, limits));
    v.checks.push_back(checkErrors(report, limits, suppressions, detail));
    if (!incomplete.name.empty()) {
        v.checks.push_back(std::move(incomplete));
    }
    return v;
}

} // namespace gmt::cli
