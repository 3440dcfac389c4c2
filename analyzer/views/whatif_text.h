// `gpumemtrace whatif`'s text: per run and device, one row per setting (peak reserved,
// peak allocated, fragmentation at the peak, cudaMalloc/cudaFree calls, the least capacity,
// each capacity's verdict), then whether each row is exact and why.
#pragma once

#include "model/whatif.h"

#include <string>

namespace gmt::analyzer {

std::string renderWhatIf(const WhatIfReport& report);

} // namespace gmt::analyzer
