#include "trace_dump.h"

#include "subprocess.h"

#include <sstream>

namespace gmt::test {

using nlohmann::json;

DumpedTrace dumpTrace(const std::string& cli, const std::string& path) {
    ProcessResult r = runProcess({cli, "dump", path});
    DumpedTrace t;
    t.exit_code = r.exit_code;
    t.error = r.err;
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.empty()) {
            continue;
        }
        json j = json::parse(line);
        std::string kind = j.value("record", "");
        t.last_record = kind;
        if (kind == "header") {
            t.header = j;
        } else if (kind == "event") {
            t.events.push_back(j);
        } else if (kind == "stack") {
            t.stacks.push_back(j);
        } else if (kind == "module") {
            t.modules.push_back(j);
        } else if (kind == "device") {
            t.devices.push_back(j);
        } else if (kind == "phase") {
            t.phases.push_back(j);
        } else if (kind == "trailer") {
            t.trailer = j;
            ++t.trailers;
        }
    }
    return t;
}

std::vector<json> DumpedTrace::find(const std::string& op, uint64_t size) const {
    std::vector<json> out;
    for (const json& e : events) {
        if (e["event"] == op && e["size"].get<uint64_t>() == size) {
            out.push_back(e);
        }
    }
    return out;
}

const json* DumpedTrace::stackOf(const json& event) const {
    for (const json& s : stacks) {
        if (s["id"] == event["stack"]) {
            return &s;
        }
    }
    return nullptr;
}

bool DumpedTrace::stackPassesThrough(const json& event, const std::string& name) const {
    const json* stack = stackOf(event);
    if (!stack) {
        return false;
    }
    for (const json& frame : (*stack)["frames"]) {
        uint64_t address = std::stoull(frame.get<std::string>(), nullptr, 16);
        for (const json& m : modules) {
            uint64_t start = std::stoull(m["start"].get<std::string>(), nullptr, 16);
            uint64_t end = std::stoull(m["end"].get<std::string>(), nullptr, 16);
            std::string path = m["path"];
            if (address >= start && address < end && path.size() >= name.size() &&
                path.compare(path.size() - name.size(), name.size(), name) == 0) {
                return true;
            }
        }
    }
    return false;
}

} // namespace gmt::test
