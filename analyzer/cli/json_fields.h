// Lenient field access for reports: a report may come from this build (unsigned
// numbers) or from a JSON file (parsed numbers, possibly written by another version), and
// a missing or odd field must read as "nothing", never throw.
#pragma once

#include "json.h"

#include <cstdint>
#include <string>

namespace gmt::cli {

inline uint64_t jsonCount(const gmt::analyzer::Json& j, const char* key) {
    if (!j.is_object()) {
        return 0;
    }
    auto it = j.find(key);
    if (it == j.end()) {
        return 0;
    }
    if (it->is_number_unsigned()) {
        return it->get<uint64_t>();
    }
    if (it->is_number_integer()) {
        int64_t v = it->get<int64_t>();
        return v > 0 ? static_cast<uint64_t>(v) : 0;
    }
    if (it->is_number_float()) {
        double v = it->get<double>();
        return v > 0 ? static_cast<uint64_t>(v) : 0;
    }
    return 0;
}

// The member, or null when absent (operator[] on a const object must not be used for
// keys that may be missing).
inline const gmt::analyzer::Json& jsonMember(const gmt::analyzer::Json& j, const char* key) {
    static const gmt::analyzer::Json kNull;
    if (!j.is_object()) {
        return kNull;
    }
    auto it = j.find(key);
    return it != j.end() ? *it : kNull;
}

inline std::string jsonString(const gmt::analyzer::Json& j, const char* key) {
    if (!j.is_object()) {
        return {};
    }
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

} // namespace gmt::cli
