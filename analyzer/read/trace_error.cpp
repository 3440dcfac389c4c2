#include "read/trace_error.h"

namespace gmt::analyzer {

TraceError::TraceError(std::string file, uint64_t offset, std::string reason)
    : std::runtime_error(file + ": offset " + std::to_string(offset) + ": " + reason),
      file_(std::move(file)), offset_(offset), reason_(std::move(reason)) {}

} // namespace gmt::analyzer
