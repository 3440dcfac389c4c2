// A trace as `gpumemtrace dump` prints it, split by record type, for assertions.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gmt::test {

struct DumpedTrace {
    nlohmann::json header;
    std::vector<nlohmann::json> events;
    std::vector<nlohmann::json> stacks;
    std::vector<nlohmann::json> modules;
    std::vector<nlohmann::json> devices;
    std::vector<nlohmann::json> phases;
    nlohmann::json trailer; // the last one; null when the trace has none
    int trailers = 0;
    std::string last_record; // what the last record is ("trailer", "event", ...)
    int exit_code = -1;
    std::string error;

    // Events of one op whose size is `size`.
    std::vector<nlohmann::json> find(const std::string& op, uint64_t size) const;
    // The events of allocations of `size` (there must be exactly one).
    const nlohmann::json* stackOf(const nlohmann::json& event) const;
    // True when some frame of the event's stack lies in a module whose path ends with `name`.
    bool stackPassesThrough(const nlohmann::json& event, const std::string& name) const;
};

DumpedTrace dumpTrace(const std::string& cli, const std::string& path);

} // namespace gmt::test
