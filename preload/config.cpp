#include "config.h"

#include "logging.h"

#include <cerrno>
#include <cstdlib>
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

} // namespace

Config readConfig() {
    Config c;
    if (const char* v = env("GPUMEMTRACE_LOG_LEVEL")) {
        c.log_level = v;
    }
    initLogging(c.log_level);
    if (const char* v = env("GPUMEMTRACE_ENABLE")) {
        c.enabled = std::string_view(v) != "0";
    }
    if (const char* v = env("GPUMEMTRACE_OUTPUT")) {
        c.output_template = v;
    }
    if (const char* v = env("GPUMEMTRACE_STACK_DEPTH")) {
        char* end = nullptr;
        long depth = std::strtol(v, &end, 10);
        if (*end || depth < 0 || depth > static_cast<long>(format::kMaxStackDepth)) {
            logger().warn("GPUMEMTRACE_STACK_DEPTH={} is not a depth in 0..{}; using {}", v,
                          format::kMaxStackDepth, c.stack_depth);
        } else {
            c.stack_depth = static_cast<uint32_t>(depth);
        }
    }
    if (const char* v = env("GPUMEMTRACE_PYTHON")) {
        c.python = std::string_view(v) != "0";
    }
    if (const char* v = env("GPUMEMTRACE_BUFFER_SIZE")) {
        if (auto bytes = parseSize(v)) {
            c.buffer_bytes = *bytes;
        } else {
            logger().warn("GPUMEMTRACE_BUFFER_SIZE={} is not a size; using {} bytes", v,
                          c.buffer_bytes);
        }
    }
    if (const char* v = env("GPUMEMTRACE_ON_FULL")) {
        std::string_view s(v);
        if (s == "block") {
            c.on_full = OnFull::Block;
        } else if (s == "drop") {
            c.on_full = OnFull::Drop;
        } else {
            logger().warn("GPUMEMTRACE_ON_FULL={} is neither block nor drop; using block", v);
        }
    }
    return c;
}

} // namespace gmt::preload
