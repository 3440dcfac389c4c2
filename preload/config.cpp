#include "config.h"

#include "logging.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <unistd.h>

#include <gpumemtrace/byte_size.h>
#include <gpumemtrace/trace_format.h>

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

} // namespace

Config readConfig() {
    Config c;
    // Problems are collected, not logged: this runs when the library is loaded, in every
    // process of the program's tree (shells, compilers, `sh -c` children), and only those
    // that go on to use CUDA should say anything (reportConfigProblems).
    if (const char* v = env("GPUMEMTRACE_LOG_LEVEL")) {
        if (isLogLevel(v)) {
            c.log_level = v;
        } else {
            c.problems.push_back(std::string("GPUMEMTRACE_LOG_LEVEL=") + v +
                                 " is not one of trace, debug, info, warn, error, critical, off; "
                                 "using " +
                                 c.log_level);
        }
    }
    initLogging(c.log_level);
    if (const char* v = env("GPUMEMTRACE_ENABLE")) {
        if (std::optional<bool> on = parseSwitch(v)) {
            c.enabled = *on;
        } else {
            c.problems.push_back(std::string("GPUMEMTRACE_ENABLE=") + v +
                                 " is neither 0 nor 1; tracing stays on");
        }
    }
    if (const char* v = env("GPUMEMTRACE_OUTPUT")) {
        c.output_template = v;
    }
    if (const char* v = env("GPUMEMTRACE_STACK_DEPTH")) {
        char* end = nullptr;
        errno = 0;
        long depth = std::strtol(v, &end, 10);
        if (*end || errno || depth < 0 || depth > static_cast<long>(format::kMaxStackDepth)) {
            c.problems.push_back(std::string("GPUMEMTRACE_STACK_DEPTH=") + v +
                                 " is not a depth in 0.." + std::to_string(format::kMaxStackDepth) +
                                 "; using " + std::to_string(c.stack_depth));
        } else {
            c.stack_depth = static_cast<uint32_t>(depth);
        }
    }
    if (const char* v = env("GPUMEMTRACE_PYTHON")) {
        c.python = std::string_view(v) != "0";
    }
    if (const char* v = env("GPUMEMTRACE_CACHING_ALLOCATOR")) {
        c.caching_allocator = std::string_view(v) != "0";
    }
    if (const char* v = env("GPUMEMTRACE_BUFFER_SIZE")) {
        if (auto bytes = parseSize(v)) {
            c.buffer_bytes = *bytes;
        } else {
            c.problems.push_back(std::string("GPUMEMTRACE_BUFFER_SIZE=") + v +
                                 " is not a size; using " + std::to_string(c.buffer_bytes) +
                                 " bytes");
        }
    }
    if (const char* v = env("GPUMEMTRACE_ON_FULL")) {
        std::string_view s(v);
        if (s == "block") {
            c.on_full = OnFull::Block;
        } else if (s == "drop") {
            c.on_full = OnFull::Drop;
        } else {
            c.problems.push_back(std::string("GPUMEMTRACE_ON_FULL=") + v +
                                 " is neither block nor drop; using block");
        }
    }
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
