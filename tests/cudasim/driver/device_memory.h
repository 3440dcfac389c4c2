// One simulated GPU's memory: its address range, its capacity, and where allocations go.
//
// Placement follows what CUDA does on Hopper: a request of 2 MiB or more takes whole 2 MiB
// granules (size rounded up); a smaller one is rounded up to 512 bytes and carved out of a
// granule that holds only blocks of the same arena. Capacity is charged per granule, so `held()` is
// what a real cuMemGetInfo would report as used: granules, not requested bytes.
#pragma once

#include "range_allocator.h"

#include <cstdint>
#include <map>
#include <optional>

namespace cudasim {

// Managed memory never shares a granule with device memory: its granules are backed by real
// host memory so that programs can touch it.
enum class Arena : uint8_t { Device, Managed };

struct Block {
    uint64_t addr = 0;
    uint64_t size = 0; // bytes taken from the address space (rounded), not the request
    Arena arena = Arena::Device;
};

class DeviceMemory {
  public:
    DeviceMemory(int ordinal, uint64_t va_base, uint64_t va_size, uint64_t capacity);

    int ordinal() const { return ordinal_; }
    uint64_t capacity() const { return capacity_; }
    uint64_t held() const { return held_; }
    uint64_t free_bytes() const { return capacity_ - held_; }
    bool contains(uint64_t addr) const { return addresses_.contains(addr); }

    // Physical memory with no address of its own (VMM handles).
    bool charge(uint64_t bytes);
    void uncharge(uint64_t bytes);

    // Whole granules with an address: `bytes` must be a multiple of the granule.
    std::optional<uint64_t> take_granules(uint64_t bytes);
    // Whole granules at exactly `addr`, if that range is free (to grow a block in place).
    bool take_granules_at(uint64_t addr, uint64_t bytes);
    void return_granules(uint64_t addr, uint64_t bytes);

    // An allocation placed by the rules above; nullopt when capacity (or host memory, for the
    // managed arena) runs out.
    std::optional<Block> allocate(uint64_t bytes, Arena arena);
    void release(const Block& block);

  private:
    std::optional<uint64_t> take_arena_granules(uint64_t bytes, Arena arena);
    void return_arena_granules(uint64_t addr, uint64_t bytes, Arena arena);
    std::map<uint64_t, RangeAllocator>& small_granules(Arena arena);

    int ordinal_;
    uint64_t capacity_;
    uint64_t held_ = 0;
    RangeAllocator addresses_;
    // Granules that small blocks are carved from, by base address, per arena.
    std::map<uint64_t, RangeAllocator> small_device_;
    std::map<uint64_t, RangeAllocator> small_managed_;
};

} // namespace cudasim
