#include "analysis/whatif/stream_ordered_pool.h"

namespace gmt::analyzer {

ModelPolicy streamOrderedPoolPolicy() {
    ModelPolicy p;
    p.one_pool = true;
    p.page_bytes = kStreamOrderedPage;
    // 512-byte rounding, no split limit, no garbage collection: the pool has none of the
    // caching allocator's settings.
    p.rules = AllocatorRules();
    return p;
}

} // namespace gmt::analyzer
