// The tracer's own diagnostics: spdlog to stderr, prefixed [gpumemtrace], quiet (warn)
// unless GPUMEMTRACE_LOG_LEVEL says otherwise.
#pragma once

#include <spdlog/spdlog.h>
#include <string>

namespace gmt::preload {

void initLogging(const std::string& level);
spdlog::logger& logger();

} // namespace gmt::preload
