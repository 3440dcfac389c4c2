// Byte counts for people: "512 B", "1.50 GiB". One function for the text report, the
// failure diagnoses and the CLI's messages, so the same size always reads the same.
#pragma once

#include <cstdint>
#include <string>

namespace gmt::analyzer {

// Below 1 KiB in whole bytes, else in the largest binary unit that keeps the value >= 1,
// with `decimals` digits after the point. A saturated sum (base/saturating.h) reads "at
// least 16 EiB (saturated)".
std::string humanBytes(uint64_t bytes, int decimals = 2);

} // namespace gmt::analyzer
