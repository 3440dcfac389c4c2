// Free-space bookkeeping for one contiguous address range.
//
// First fit by address, with coalescing on free: that is what makes the simulator's placement
// predictable (a freed block is the first candidate for the next request of its size) and what
// produces real fragmentation when frees leave holes between live blocks.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace cudasim {

class RangeAllocator {
  public:
    RangeAllocator() = default;
    RangeAllocator(uint64_t base, uint64_t size);

    // Lowest address, aligned to `alignment` (a power of two), with `size` free bytes after it.
    std::optional<uint64_t> allocate(uint64_t size, uint64_t alignment);
    // Takes exactly [addr, addr + size) if all of it is free.
    bool allocate_at(uint64_t addr, uint64_t size);
    // The caller guarantees the range was allocated from this allocator and is not free.
    void free(uint64_t addr, uint64_t size);
    // Grows the range by `size` free bytes at its end.
    void extend(uint64_t size);
    // Free bytes that reach the end of the range (what an extension would add to).
    uint64_t free_at_end() const;

    uint64_t base() const { return base_; }
    uint64_t size() const { return size_; }
    uint64_t free_bytes() const { return free_bytes_; }
    bool fully_free() const { return free_bytes_ == size_; }
    bool contains(uint64_t addr) const { return addr >= base_ && addr - base_ < size_; }

  private:
    using FreeMap = std::map<uint64_t, uint64_t>; // start -> length
    void carve(FreeMap::iterator it, uint64_t start, uint64_t size);

    uint64_t base_ = 0;
    uint64_t size_ = 0;
    uint64_t free_bytes_ = 0;
    FreeMap free_;
};

} // namespace cudasim
