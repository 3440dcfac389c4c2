#include "cli/live_traces.h"

#include "cli/report_input.h"
#include "report/trace_report.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>

#include <gpumemtrace/format/file_layout.h>

namespace gmt::cli {

namespace {

bool hasTraceMagic(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[sizeof format::kMagic] = {};
    return in.read(magic, sizeof magic) && std::memcmp(magic, format::kMagic, sizeof magic) == 0;
}

// A trace the process has mapped: the ring is a shared mapping of the file (the path is the
// last field of its line in /proc/PID/maps).
std::string mappedTrace(const std::string& pid) {
    std::ifstream maps("/proc/" + pid + "/maps");
    std::string line;
    while (std::getline(maps, line)) {
        const size_t slash = line.find('/');
        if (slash == std::string::npos) {
            continue;
        }
        const std::string path = line.substr(slash);
        if (path.ends_with(".gmtrace") && hasTraceMagic(path)) {
            return path;
        }
    }
    return {};
}

} // namespace

bool isPidInput(const std::string& input) {
    if (input.empty() || input.size() > 10 ||
        !std::all_of(input.begin(), input.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        return false;
    }
    struct stat st {};
    return ::stat(input.c_str(), &st) != 0;
}

std::string traceOfProcess(const std::string& pid) {
    const std::filesystem::path fds = "/proc/" + pid + "/fd";
    std::error_code ec;
    if (!std::filesystem::exists("/proc/" + pid, ec)) {
        throw InputError(pid + ": no such process");
    }
    std::filesystem::directory_iterator it(fds, ec);
    if (ec) {
        throw InputError(pid + ": cannot read its open files (" + ec.message() +
                         "): pass its trace file instead");
    }
    // The trace is the file it writes with pwrite: among its descriptors, the one whose
    // target is a trace (by name, then by content: the name is the user's template).
    std::string found;
    for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
        std::error_code link_ec;
        const std::filesystem::path target = std::filesystem::read_symlink(it->path(), link_ec);
        const std::string path = target.string();
        if (link_ec || path.empty() || path[0] != '/') {
            continue; // sockets, pipes, anonymous files
        }
        if (path.ends_with(".gmtrace") && hasTraceMagic(path)) {
            return path;
        }
        if (found.empty() && !path.ends_with(" (deleted)") && hasTraceMagic(path)) {
            found = path;
        }
    }
    if (found.empty()) {
        found = mappedTrace(pid);
    }
    if (found.empty()) {
        throw InputError(pid + ": the process has no gpumemtrace trace open (not traced, or no "
                               "CUDA call yet: the trace is created at the first)");
    }
    return found;
}

std::vector<std::string> liveTraceInputs(const std::vector<std::string>& inputs) {
    std::vector<std::string> out;
    for (const std::string& input : inputs) {
        if (isPidInput(input)) {
            out.push_back(traceOfProcess(input));
        } else {
            const std::vector<std::string> expanded = expandTraceInputs({input});
            out.insert(out.end(), expanded.begin(), expanded.end());
        }
    }
    return out;
}

bool processExists(uint64_t pid) {
    if (pid == 0 || pid > static_cast<uint64_t>(INT32_MAX)) {
        return false;
    }
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

void markSnapshot(analyzer::Report& report, uint64_t now_wall_ns) {
    analyzer::SnapshotReport snapshot;
    snapshot.time_wall_ns = now_wall_ns;
    for (analyzer::ProcessReport& p : report.processes) {
        // A trace with its trailer has ended, whatever runs under that pid now.
        p.running = !p.complete && !p.exit_signal && processExists(p.pid);
        snapshot.running += *p.running ? 1 : 0;
    }
    report.snapshot = snapshot;
}

uint64_t wallClockNs() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

analyzer::Report snapshotOfTraces(const std::vector<std::string>& traces,
                                  const analyzer::ReportOptions& options) {
    // Taken before reading: a process that ends while its trace is read is reported as it
    // was then, running, with what its trace held.
    const uint64_t now = wallClockNs();
    analyzer::Report report = analyzer::reportOfTraces(traces, options);
    markSnapshot(report, now);
    return report;
}

std::optional<double> parseSeconds(const std::string& text) {
    std::string number = text;
    double scale = 1;
    if (number.ends_with("ms")) {
        number.resize(number.size() - 2);
        scale = 1e-3;
    } else if (number.ends_with("s")) {
        number.resize(number.size() - 1);
    }
    try {
        size_t used = 0;
        const double v = std::stod(number, &used);
        if (used != number.size() || !(v > 0) || v * scale > 365.0 * 24 * 3600) {
            return std::nullopt;
        }
        return v * scale;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

std::string checkSeconds(const std::string& text) {
    return parseSeconds(text) ? std::string()
                              : "not a period of time: a number of seconds (2, 0.5, 2s, 250ms)";
}

} // namespace gmt::cli
