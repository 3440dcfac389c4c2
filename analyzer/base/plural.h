// "1 allocation", "3 allocations": a count and its word, as every text view writes it.
#pragma once

#include <cstdint>
#include <string>

namespace gmt::analyzer {

inline std::string plural(uint64_t n, const char* word) {
    return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

} // namespace gmt::analyzer
