// Facts for the trace header: who the process is, and the GPUs the driver reports.
#pragma once

#include <gpumemtrace/format/records.h>

#include <vector>

namespace gmt::preload {

format::HeaderInfo collectHeader(uint32_t stack_depth);

// Asks the (already initialized) driver; empty when it cannot answer.
std::vector<format::DeviceInfo> collectDevices();

} // namespace gmt::preload
