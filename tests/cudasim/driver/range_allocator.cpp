#include "range_allocator.h"

#include "constants.h"

namespace cudasim {

RangeAllocator::RangeAllocator(uint64_t base, uint64_t size)
    : base_(base), size_(size), free_bytes_(size) {
    if (size != 0) {
        free_.emplace(base, size);
    }
}

std::optional<uint64_t> RangeAllocator::allocate(uint64_t size, uint64_t alignment) {
    if (size == 0 || size > free_bytes_) {
        return std::nullopt;
    }
    for (auto it = free_.begin(); it != free_.end(); ++it) {
        uint64_t start = align_up(it->first, alignment);
        uint64_t free_end = it->first + it->second;
        if (start >= free_end || free_end - start < size) {
            continue;
        }
        carve(it, start, size);
        return start;
    }
    return std::nullopt;
}

bool RangeAllocator::allocate_at(uint64_t addr, uint64_t size) {
    if (size == 0) {
        return false;
    }
    auto it = free_.upper_bound(addr);
    if (it == free_.begin()) {
        return false;
    }
    --it;
    uint64_t free_end = it->first + it->second;
    if (addr >= free_end || free_end - addr < size) {
        return false;
    }
    carve(it, addr, size);
    return true;
}

void RangeAllocator::free(uint64_t addr, uint64_t size) {
    uint64_t start = addr;
    uint64_t length = size;
    auto next = free_.lower_bound(addr);
    if (next != free_.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == start) {
            start = prev->first;
            length += prev->second;
            free_.erase(prev);
        }
    }
    if (next != free_.end() && next->first == addr + size) {
        length += next->second;
        free_.erase(next);
    }
    free_.emplace(start, length);
    free_bytes_ += size;
}

void RangeAllocator::extend(uint64_t size) {
    uint64_t old_end = base_ + size_;
    size_ += size;
    free(old_end, size);
}

uint64_t RangeAllocator::free_at_end() const {
    if (free_.empty()) {
        return 0;
    }
    auto last = std::prev(free_.end());
    return last->first + last->second == base_ + size_ ? last->second : 0;
}

void RangeAllocator::carve(FreeMap::iterator it, uint64_t start, uint64_t size) {
    uint64_t free_start = it->first;
    uint64_t free_end = it->first + it->second;
    free_.erase(it);
    if (start > free_start) {
        free_.emplace(free_start, start - free_start);
    }
    if (free_end > start + size) {
        free_.emplace(start + size, free_end - (start + size));
    }
    free_bytes_ -= size;
}

} // namespace cudasim
