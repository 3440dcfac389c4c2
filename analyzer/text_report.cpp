#include "text_report.h"

#include "human_bytes.h"

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace gmt::analyzer {

namespace {

constexpr size_t kFramesShown = 8;

std::string seconds(uint64_t t, uint64_t base) {
    char buf[32];
    double s =
        t >= base ? static_cast<double>(t - base) / 1e9 : -static_cast<double>(base - t) / 1e9;
    std::snprintf(buf, sizeof buf, "+%.3f s", s);
    return buf;
}

std::string bytes(const Json& v) {
    return v.is_number() ? humanBytes(v.get<uint64_t>()) : std::string("unknown");
}

void printStack(std::ostringstream& out, const Json& stack, const char* indent) {
    if (!stack.is_array() || stack.empty()) {
        out << indent << "(no stack recorded)\n";
        return;
    }
    size_t n = 0;
    for (const Json& f : stack) {
        if (n++ == kFramesShown) {
            out << indent << "... " << (stack.size() - kFramesShown) << " more frames\n";
            break;
        }
        std::string function = f.value("function", "");
        std::string module = f.value("module", "");
        out << indent;
        if (!function.empty()) {
            out << function;
            std::string file = f.value("file", "");
            if (!file.empty()) {
                out << " (" << file << ":" << f.value("line", 0) << ")";
            }
            if (f.value("inlined", false)) {
                out << " [inlined]";
            }
        } else if (!module.empty()) {
            out << module << "+" << f.value("offset", f.value("address", ""));
        } else {
            out << f.value("address", "?");
        }
        out << "\n";
    }
}

} // namespace

std::string renderText(const Json& r) {
    std::ostringstream out;
    uint64_t base = UINT64_MAX;
    for (const Json& p : r["processes"]) {
        base = std::min(base, p.value("start_mono_ns", uint64_t{0}));
    }
    if (base == UINT64_MAX) {
        base = 0;
    }

    out << "gpumemtrace report (" << r.value("generator", "") << ")\n\n";
    for (const Json& p : r["processes"]) {
        out << "process " << p["pid"] << "  " << p.value("command", "") << "\n"
            << "  trace " << p.value("trace_file", "") << ": " << p["events"] << " events, "
            << seconds(p.value("duration_ns", uint64_t{0}), 0) << " long";
        if (p.value("dropped_events", 0) > 0) {
            out << ", " << p["dropped_events"] << " events DROPPED";
        }
        out << "\n";
        if (!p.value("complete", false)) {
            out << "  INCOMPLETE trace: " << p.value("incomplete_reason", "")
                << " (valid log ends at offset " << p.value("valid_log_end_offset", 0)
                << "); analysed up to its last valid record\n";
        }
        if (p.contains("missing_events")) {
            const Json& m = p["missing_events"];
            std::vector<std::string> what;
            if (m.value("gap_count", uint64_t{0}) > 0) {
                what.push_back(std::to_string(m.value("missing_positions", uint64_t{0})) +
                               " sequence positions in " +
                               std::to_string(m.value("gap_count", uint64_t{0})) + " gap(s)");
            }
            if (m.value("dropped_events", uint64_t{0}) > 0) {
                what.push_back(std::to_string(m.value("dropped_events", uint64_t{0})) +
                               " events dropped at unknown points");
            }
            if (m.value("unknown_tail", false)) {
                what.push_back("an unknown number after the valid log");
            }
            out << "  MISSING EVENTS:";
            for (size_t i = 0; i < what.size(); ++i) {
                out << (i ? ", " : " ") << what[i];
            }
            out << "; leaks and errors they could explain are marked uncertain\n";
        }
    }

    const Json& s = r["summary"];
    out << "\nSummary\n"
        << "  allocations " << s["allocations"] << ", frees " << s["frees"]
        << ", failed allocations " << s["failed_allocations"] << ", errors " << s["errors"] << "\n"
        << "  leaked " << bytes(s["leaked_bytes"]) << " in " << s["leaked_allocations"]
        << " allocations";
    if (s.value("uncertain_leaked_bytes", uint64_t{0}) > 0) {
        out << " (" << bytes(s["uncertain_leaked_bytes"]) << " uncertain: events are missing)";
    }
    if (s.value("uncertain_errors", uint64_t{0}) > 0) {
        out << "; " << s["uncertain_errors"] << " of the errors uncertain";
    }
    out << "\n"
        << "  peak " << bytes(s["peak_bytes"]) << " of device memory at "
        << seconds(s.value("peak_time_ns", uint64_t{0}), base) << "\n";
    for (const Json& d : r["devices"]) {
        out << "  device " << d["ordinal"] << " " << d.value("name", "") << ": peak "
            << bytes(d["peak_bytes"]) << " of " << bytes(d["total_bytes"]) << ", leaked "
            << bytes(d["leaked_bytes"]) << "\n";
    }
    out << "  by kind:";
    for (const auto& [kind, k] : r["kinds"].items()) {
        if (k.value("allocations", 0) > 0) {
            out << "  " << kind << " " << k["allocations"] << " allocs, peak "
                << bytes(k["peak_bytes"]) << ", leaked " << bytes(k["leaked_bytes"]) << ";";
        }
    }
    out << "\n";

    if (!r["leaks"].empty()) {
        out << "\nLeaks (largest first)\n";
        int i = 0;
        for (const Json& l : r["leaks"]) {
            out << "  #" << ++i << " " << bytes(l["bytes"]) << " in " << l["allocations"]
                << " allocation(s), " << l.value("kind", "") << " via " << l.value("api", "");
            if (l.value("released_by_teardown", false)) {
                out << " — released only by device reset / context destroy, never freed";
            }
            out << "\n";
            printStack(out, l["stack"], "      ");
        }
    }

    const Json& peak = r["peak"];
    out << "\nPeak " << bytes(peak["bytes"]) << " at "
        << seconds(peak.value("time_ns", uint64_t{0}), base) << ", held by\n";
    for (const Json& site : peak["top_sites"]) {
        out << "  " << bytes(site["bytes"]) << " in " << site["allocations"] << " allocation(s)\n";
        printStack(out, site["stack"], "      ");
    }

    if (!r["fragmentation"].empty()) {
        out << "\nFragmentation (holes inside allocation granules and VMM reservations)\n";
        for (const Json& f : r["fragmentation"]) {
            char ratio[16];
            std::snprintf(ratio, sizeof ratio, "%.2f", f.value("ratio", 0.0));
            out << "  " << f.value("moment", "") << " at "
                << seconds(f.value("time_ns", uint64_t{0}), base) << ", device " << f["device"]
                << ": " << bytes(f["hole_bytes"]) << " in holes, largest "
                << bytes(f["largest_hole_bytes"]) << ", ratio " << ratio << "\n";
            for (const Json& pin : f["pinning"]) {
                out << "      " << pin.value("address", "") << " (" << bytes(pin["bytes"])
                    << ") alone keeps " << bytes(pin["pinned_bytes"]) << " of granules in use\n";
            }
        }
    }

    if (!r["failures"].empty()) {
        out << "\nFailed allocations\n";
        for (const Json& f : r["failures"]) {
            out << "  " << seconds(f.value("time_ns", uint64_t{0}), base) << " "
                << f.value("api", "") << "(" << bytes(f["requested_bytes"]) << ") -> "
                << f.value("error", "") << "\n"
                << "    " << f.value("diagnosis", "") << "\n"
                << "    live then " << bytes(f["live_bytes"]) << ", driver free "
                << bytes(f["device_free_bytes"]) << ", largest hole "
                << bytes(f["largest_hole_bytes"]) << "\n";
            printStack(out, f["stack"], "      ");
        }
    }

    if (!r["errors"].empty()) {
        out << "\nErrors\n";
        for (const Json& e : r["errors"]) {
            out << "  " << (e.value("uncertain", false) ? "(uncertain) " : "")
                << e.value("type", "") << ": " << e.value("api", "") << "("
                << e.value("address", "") << ") at "
                << seconds(e.value("time_ns", uint64_t{0}), base) << ": " << e.value("detail", "")
                << "\n";
            printStack(out, e["stack"], "      ");
            if (!e["allocation_stack"].empty()) {
                out << "    allocated at\n";
                printStack(out, e["allocation_stack"], "      ");
            }
        }
    }
    return out.str();
}

} // namespace gmt::analyzer
