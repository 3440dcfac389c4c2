// PyTorch's caching allocator rules (format/allocator_rules.h): shared with the recorder,
// whose aggregated mode rebuilds block sizes as the analysis does.
#pragma once

#include <gpumemtrace/format/allocator_rules.h>

namespace gmt::analyzer {

using AllocatorRules = format::AllocatorRules;

} // namespace gmt::analyzer
