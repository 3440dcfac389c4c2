#include "cli/count_option.h"

#include <charconv>
#include <string>

namespace gmt::cli {

CLI::Validator countRange(uint64_t min, uint64_t max) {
    const std::string range = std::to_string(min) + " to " + std::to_string(max);
    return CLI::Validator(
        [min, max, range](std::string& value) -> std::string {
            uint64_t n = 0;
            const char* end = value.data() + value.size();
            auto [ptr, ec] = std::from_chars(value.data(), end, n);
            if (value.empty() || ec != std::errc() || ptr != end || n < min || n > max) {
                return "'" + value + "' is not a whole number from " + range;
            }
            return {};
        },
        std::to_string(min) + ".." + std::to_string(max));
}

} // namespace gmt::cli
