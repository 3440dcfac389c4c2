#include "config.h"

#include "logging.h"
#include "printable.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <unistd.h>

#include <gpumemtrace/byte_size.h>
#include <gpumemtrace/format/record_limits.h>
#include <gpumemtrace/settings.h>

namespace gmt::preload {
namespace {

const char* env(const char* name) {
    const char* v = std::getenv(name);
    return (v && *v) ? v : nullptr;
}

// The names spdlog accepts (it silently turns anything else into "off").
bool isLogLevel(std::string_view v) {
    for (std::string_view name :
         {"trace", "debug", "info", "warn", "warning", "err", "error", "critical", "off"}) {
        if (v == name) {
            return true;
        }
    }
    return false;
}

// 0/1 and the usual words for them; nullopt for anything else.
std::optional<bool> parseSwitch(std::string_view v) {
    for (std::string_view off : {"0", "false", "no", "off"}) {
        if (v == off) {
            return false;
        }
    }
    for (std::string_view on : {"1", "true", "yes", "on"}) {
        if (v == on) {
            return true;
        }
    }
    return std::nullopt;
}

// Reads `text` as the value of setting `s` into `c`; false when it is not one. A value that
// reads but is out of bounds is clamped, with a line in `note`.
bool apply(Config& c, const settings::Setting& s, const char* value, std::string& note) {
    const std::string_view text(value);
    if (&s == &settings::kLogLevel) {
        if (!isLogLevel(text)) {
            return false;
        }
        c.log_level = text;
    } else if (&s == &settings::kEnable) {
        std::optional<bool> on = parseSwitch(text);
        if (!on) {
            return false;
        }
        c.enabled = *on;
    } else if (&s == &settings::kStart) {
        if (text != "running" && text != "paused") {
            return false;
        }
        c.start_paused = text == "paused";
    } else if (&s == &settings::kOutput) {
        c.output_template = text;
    } else if (&s == &settings::kStackDepth) {
        char* end = nullptr;
        errno = 0;
        const long depth = std::strtol(value, &end, 10);
        if (*end || errno || depth < 0 || depth > static_cast<long>(format::kMaxStackDepth)) {
            return false;
        }
        c.stack_depth = static_cast<uint32_t>(depth);
    } else if (&s == &settings::kPython || &s == &settings::kCachingAllocator) {
        std::optional<bool> on = parseSwitch(text);
        if (!on) {
            return false;
        }
        (&s == &settings::kPython ? c.python : c.caching_allocator) = *on;
    } else if (&s == &settings::kBufferSize) {
        std::optional<uint64_t> bytes = parseSize(text);
        if (!bytes) {
            return false;
        }
        c.buffer_bytes = std::min<uint64_t>(*bytes, settings::kMaxBufferBytes);
        if (*bytes > settings::kMaxBufferBytes) {
            note = std::string(s.name) + "=" + printable(text) + " is more than the ring may be; " +
                   "clamped to " + std::to_string(settings::kMaxBufferBytes >> 20) + "M";
        }
    } else if (&s == &settings::kMode) {
        if (text != "full" && text != "aggregate") {
            return false;
        }
        c.aggregate = text == "aggregate";
    } else if (&s == &settings::kAggregateBudget) {
        std::optional<uint64_t> bytes = parseSize(text);
        if (!bytes) {
            return false;
        }
        c.aggregate_budget = std::clamp<uint64_t>(*bytes, settings::kMinAggregateBudget,
                                                  settings::kMaxAggregateBudget);
        if (c.aggregate_budget != *bytes) {
            note = std::string(s.name) + "=" + printable(text) + " is out of range; clamped to " +
                   std::to_string(c.aggregate_budget);
        }
    } else if (&s == &settings::kFailureFile) {
        c.failure_file = text;
    } else if (&s == &settings::kOnFull) {
        if (text != "block" && text != "drop") {
            return false;
        }
        c.on_full = text == "drop" ? OnFull::Drop : OnFull::Block;
    }
    return true;
}

} // namespace

Config readConfig() {
    Config c;
    // Every setting starts from the table's default, read as a value would be, so that the
    // default lives in settings.h only (tests/recorder/settings_test.cpp checks that each
    // reads).
    std::string note;
    for (const settings::Setting* s : settings::kRecorderSettings) {
        apply(c, *s, s->default_value, note);
    }
    // Problems are collected, not logged: this runs when the library is loaded, in every
    // process of the program's tree (shells, compilers, `sh -c` children), and only those
    // that go on to use CUDA should say anything (reportConfigProblems).
    for (const settings::Setting* s : settings::kRecorderSettings) {
        const char* v = env(s->name);
        if (!v) {
            continue;
        }
        note.clear();
        if (!apply(c, *s, v, note)) {
            c.problems.push_back(std::string(s->name) + "=" + printable(v) + " is not valid (" +
                                 s->meaning + "); using " + s->default_value);
        } else if (!note.empty()) {
            c.problems.push_back(note);
        }
    }
    initLogging(c.log_level);
    return c;
}

void reportConfigProblems(const Config& config) {
    // Once per process: a forked child has them in its parent's output already.
    static std::atomic<bool> reported{false};
    if (config.problems.empty() || reported.exchange(true)) {
        return;
    }
    for (const std::string& problem : config.problems) {
        logger().warn("{}", problem);
    }
}

} // namespace gmt::preload
