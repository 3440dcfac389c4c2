#include "cli/path_option.h"

#include <string>

namespace gmt::cli {

CLI::Validator nonEmptyPath() {
    return CLI::Validator(
        [](std::string& value) -> std::string {
            return value.empty() ? "an empty path is not a file name" : std::string();
        },
        "");
}

} // namespace gmt::cli
