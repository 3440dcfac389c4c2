#include "logging.h"

#include <spdlog/sinks/stdout_sinks.h>

namespace gmt::preload {
namespace {
// Never destroyed, as the recorder (recorder.cpp, Recorder::create): a thread inside a
// traced call may log after exit() ran the static destructors.
std::shared_ptr<spdlog::logger>& instance() {
    static auto* const logger = new std::shared_ptr<spdlog::logger>;
    return *logger;
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
