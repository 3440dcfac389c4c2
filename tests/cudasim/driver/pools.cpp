#include "pools.h"

#include "constants.h"

#include <algorithm>

namespace cudasim {

std::optional<Block> MemoryPool::allocate(DeviceMemory& memory, uint64_t bytes) {
    if (bytes == 0 || bytes > memory.capacity()) {
        return std::nullopt;
    }
    uint64_t size = align_up(bytes, kSmallAlignment);
    std::optional<uint64_t> addr;
    for (auto& [base, space] : segments_) {
        if (space.free_bytes() >= size && (addr = space.allocate(size, kSmallAlignment))) {
            break;
        }
    }
    if (!addr) {
        addr = grow_in_place(memory, size);
    }
    if (!addr) {
        addr = grow_new_segment(memory, size);
    }
    if (!addr) {
        return std::nullopt;
    }
    used_ += bytes;
    used_high_ = std::max(used_high_, used_);
    ++live_allocations_;
    return Block{*addr, size, Arena::Device};
}

uint64_t MemoryPool::growth_for(const DeviceMemory& memory, uint64_t needed) const {
    uint64_t room = memory.free_bytes();
    if (max_size_ != 0) {
        room = std::min(room, max_size_ > reserved_ ? max_size_ - reserved_ : 0);
    }
    uint64_t minimal = align_up(needed, kGranule);
    uint64_t preferred = align_up(needed, kPoolGrowth);
    return preferred <= room ? preferred : minimal <= room ? minimal : 0;
}

std::optional<uint64_t> MemoryPool::grow_in_place(DeviceMemory& memory, uint64_t size) {
    for (auto& [base, space] : segments_) {
        uint64_t tail = space.free_at_end();
        uint64_t growth = growth_for(memory, size - std::min(size, tail));
        if (growth == 0 || !memory.take_granules_at(base + space.size(), growth)) {
            continue;
        }
        space.extend(growth);
        reserved_ += growth;
        reserved_high_ = std::max(reserved_high_, reserved_);
        return space.allocate(size, kSmallAlignment);
    }
    return std::nullopt;
}

std::optional<uint64_t> MemoryPool::grow_new_segment(DeviceMemory& memory, uint64_t size) {
    uint64_t growth = growth_for(memory, size);
    if (growth == 0) {
        return std::nullopt;
    }
    auto base = memory.take_granules(growth);
    if (!base) {
        return std::nullopt;
    }
    auto& space = segments_.emplace(*base, RangeAllocator(*base, growth)).first->second;
    reserved_ += growth;
    reserved_high_ = std::max(reserved_high_, reserved_);
    return space.allocate(size, kSmallAlignment);
}

void MemoryPool::free(const Block& block, uint64_t bytes) {
    auto it = std::prev(segments_.upper_bound(block.addr));
    it->second.free(block.addr, block.size);
    used_ -= bytes;
    --live_allocations_;
}

void MemoryPool::release_unused(DeviceMemory& memory, uint64_t keep) {
    for (auto it = segments_.begin(); it != segments_.end() && reserved_ > keep;) {
        if (!it->second.fully_free()) {
            ++it;
            continue;
        }
        memory.return_granules(it->first, it->second.size());
        reserved_ -= it->second.size();
        it = segments_.erase(it);
    }
}

CUresult MemoryPool::set_attribute(CUmemPool_attribute attr, const void* value) {
    if (value == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        reuse_follow_event_dependencies_ = *static_cast<const int*>(value);
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
        reuse_allow_opportunistic_ = *static_cast<const int*>(value);
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        reuse_allow_internal_dependencies_ = *static_cast<const int*>(value);
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        release_threshold_ = *static_cast<const cuuint64_t*>(value);
        return CUDA_SUCCESS;
    // The high-water marks can only be reset, and a reset starts them again from "now".
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
        if (*static_cast<const cuuint64_t*>(value) != 0) {
            return CUDA_ERROR_INVALID_VALUE;
        }
        reserved_high_ = reserved_;
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        if (*static_cast<const cuuint64_t*>(value) != 0) {
            return CUDA_ERROR_INVALID_VALUE;
        }
        used_high_ = used_;
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

CUresult MemoryPool::get_attribute(CUmemPool_attribute attr, void* value) const {
    if (value == nullptr) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    auto put64 = [value](uint64_t v) { *static_cast<cuuint64_t*>(value) = v; };
    switch (attr) {
    case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
        *static_cast<int*>(value) = reuse_follow_event_dependencies_;
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
        *static_cast<int*>(value) = reuse_allow_opportunistic_;
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
        *static_cast<int*>(value) = reuse_allow_internal_dependencies_;
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD:
        put64(release_threshold_);
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
        put64(reserved_);
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
        put64(reserved_high_);
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_USED_MEM_CURRENT:
        put64(used_);
        return CUDA_SUCCESS;
    case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
        put64(used_high_);
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

} // namespace cudasim
