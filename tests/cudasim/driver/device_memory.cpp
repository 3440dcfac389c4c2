#include "device_memory.h"

#include "constants.h"
#include "host_memory.h"

namespace cudasim {

DeviceMemory::DeviceMemory(int ordinal, uint64_t va_base, uint64_t va_size, uint64_t capacity)
    : ordinal_(ordinal), capacity_(capacity), addresses_(va_base, va_size) {}

bool DeviceMemory::charge(uint64_t bytes) {
    if (bytes > capacity_ - held_) {
        return false;
    }
    held_ += bytes;
    return true;
}

void DeviceMemory::uncharge(uint64_t bytes) {
    held_ -= bytes;
}

std::optional<uint64_t> DeviceMemory::take_granules(uint64_t bytes) {
    if (!charge(bytes)) {
        return std::nullopt;
    }
    auto addr = addresses_.allocate(bytes, kGranule);
    if (!addr) {
        uncharge(bytes);
    }
    return addr;
}

bool DeviceMemory::take_granules_at(uint64_t addr, uint64_t bytes) {
    if (!charge(bytes)) {
        return false;
    }
    if (!addresses_.allocate_at(addr, bytes)) {
        uncharge(bytes);
        return false;
    }
    return true;
}

void DeviceMemory::return_granules(uint64_t addr, uint64_t bytes) {
    addresses_.free(addr, bytes);
    uncharge(bytes);
}

std::optional<uint64_t> DeviceMemory::take_arena_granules(uint64_t bytes, Arena arena) {
    auto addr = take_granules(bytes);
    if (addr && arena == Arena::Managed && !host_memory::back_with_memory(*addr, bytes)) {
        return_granules(*addr, bytes);
        return std::nullopt;
    }
    return addr;
}

void DeviceMemory::return_arena_granules(uint64_t addr, uint64_t bytes, Arena arena) {
    if (arena == Arena::Managed) {
        host_memory::return_to_reservation(addr, bytes);
    }
    return_granules(addr, bytes);
}

std::map<uint64_t, RangeAllocator>& DeviceMemory::small_granules(Arena arena) {
    return arena == Arena::Managed ? small_managed_ : small_device_;
}

std::optional<Block> DeviceMemory::allocate(uint64_t bytes, Arena arena) {
    if (bytes == 0 || bytes > capacity_) {
        return std::nullopt; // also keeps the rounding below from overflowing
    }
    // A request that rounds up to a whole granule is a large one: release() tells the two
    // kinds apart by size alone.
    if (align_up(bytes, kSmallAlignment) >= kGranule) {
        uint64_t size = align_up(bytes, kGranule);
        auto addr = take_arena_granules(size, arena);
        if (!addr) {
            return std::nullopt;
        }
        return Block{*addr, size, arena};
    }
    uint64_t size = align_up(bytes, kSmallAlignment);
    auto& granules = small_granules(arena);
    for (auto& [base, space] : granules) {
        if (space.free_bytes() < size) {
            continue;
        }
        if (auto addr = space.allocate(size, kSmallAlignment)) {
            return Block{*addr, size, arena};
        }
    }
    auto base = take_arena_granules(kGranule, arena);
    if (!base) {
        return std::nullopt;
    }
    auto& space = granules.emplace(*base, RangeAllocator(*base, kGranule)).first->second;
    return Block{*space.allocate(size, kSmallAlignment), size, arena};
}

void DeviceMemory::release(const Block& block) {
    if (block.size >= kGranule) {
        return_arena_granules(block.addr, block.size, block.arena);
        return;
    }
    auto& granules = small_granules(block.arena);
    auto it = std::prev(granules.upper_bound(block.addr));
    it->second.free(block.addr, block.size);
    // An empty granule goes back at once, so capacity freed by the program is visible in
    // cuMemGetInfo right away.
    if (it->second.fully_free()) {
        uint64_t base = it->first;
        granules.erase(it);
        return_arena_granules(base, kGranule, block.arena);
    }
}

} // namespace cudasim
