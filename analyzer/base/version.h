// This gpumemtrace's version ("0.1.0"), and "gpumemtrace VERSION": what made a report and
// the other JSON outputs. In base/ because every output names its maker.
#pragma once

#include <string>

namespace gmt::analyzer {

std::string gpumemtraceVersion();
std::string generatorName();

} // namespace gmt::analyzer
