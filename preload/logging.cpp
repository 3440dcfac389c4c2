#include "logging.h"

#include <spdlog/sinks/stdout_sinks.h>

namespace gmt::preload {
namespace {
std::shared_ptr<spdlog::logger>& instance() {
    static std::shared_ptr<spdlog::logger> logger;
    return logger;
}
} // namespace

void initLogging(const std::string& level) {
    // Not registered globally: an application using spdlog must not see our logger.
    auto logger = std::make_shared<spdlog::logger>(
        "gpumemtrace", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    logger->set_pattern("[gpumemtrace] %l: %v");
    auto lvl = spdlog::level::from_str(level);
    if (lvl == spdlog::level::off && level != "off") {
        lvl = spdlog::level::warn;
    }
    logger->set_level(lvl);
    logger->flush_on(spdlog::level::trace);
    instance() = std::move(logger);
}

spdlog::logger& logger() {
    if (!instance()) {
        initLogging("warn");
    }
    return *instance();
}

} // namespace gmt::preload
