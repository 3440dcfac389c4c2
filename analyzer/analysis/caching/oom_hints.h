// A caching allocator's out-of-memory explained in PyTorch's terms (docs/frameworks.md,
// "Out of memory"): whether the memory was there but split into blocks too small
// (fragmentation inside segments), and whether expandable_segments, max_split_size_mb,
// freeing the cache or a smaller batch would have avoided it — said as exact where the
// recorded state settles it, as an estimate where it does not.
#pragma once

#include "analysis/caching/allocator_rules.h"
#include "analysis/caching/block_tracker.h"
#include "model/report.h"

namespace gmt::analyzer {

// Fills `out`'s diagnosis, fragmentation flag and hints from the OOM and the rules the
// allocator ran with (its figures and space are filled by the caller).
void explainOom(const BlockOom& oom, const AllocatorRules& rules, CachingOomReport& out);

} // namespace gmt::analyzer
