#include "export/stack_cache.h"

namespace gmt::analyzer {

const Stack& StackCache::frames(uint32_t process, uint32_t stack) {
    const uint64_t key = uint64_t{process} << 32 | stack;
    if (auto it = cache_.find(key); it != cache_.end()) {
        return it->second;
    }
    if (cache_.size() >= kMaxCached) {
        cache_.clear();
    }
    if (symbolizers_.size() <= process) {
        symbolizers_.resize(process + 1);
    }
    auto& symbolizer = symbolizers_[process];
    if (!symbolizer) {
        symbolizer = std::make_unique<StackSymbolizer>(*analysis_.processes()[process],
                                                       frames_.symbols, frames_.user_code);
    }
    return cache_.emplace(key, symbolizer->stack(stack)).first->second;
}

} // namespace gmt::analyzer
