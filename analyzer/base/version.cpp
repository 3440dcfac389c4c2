#include "base/version.h"

namespace gmt::analyzer {

std::string gpumemtraceVersion() {
    return GMT_VERSION; // the project's version, set by analyzer/base/CMakeLists.txt
}

std::string generatorName() {
    return "gpumemtrace " + gpumemtraceVersion();
}

} // namespace gmt::analyzer
