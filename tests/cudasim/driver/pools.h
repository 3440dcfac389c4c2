// Stream-ordered memory pools (cuMemAllocAsync and friends).
//
// A pool reserves device memory in segments of whole granules, grown 32 MiB at a time (in place
// when the addresses after a segment are free, so that a large allocation can straddle growth
// steps, as on a real GPU), and carves 512-byte-aligned allocations out of them. Freeing an
// allocation returns its bytes to the pool, not to the device: the segment stays reserved (and
// counted by cuMemGetInfo) until a synchronization finds the pool above its release threshold,
// or cuMemPoolTrimTo asks for it, and the segment is entirely unused.
#pragma once

#include "cuda_internal.h"
#include "device_memory.h"
#include "range_allocator.h"

#include <cstdint>
#include <map>
#include <optional>

namespace cudasim {

class MemoryPool {
  public:
    MemoryPool(int device, bool is_default, uint64_t max_size)
        : device_(device), is_default_(is_default), max_size_(max_size) {}

    int device() const { return device_; }
    bool is_default() const { return is_default_; }
    uint64_t live_allocations() const { return live_allocations_; }

    // A block for `bytes`; nullopt when neither the pool nor the device has room.
    std::optional<Block> allocate(DeviceMemory& memory, uint64_t bytes);
    // `bytes` is what was asked for: "used" counts requested bytes, as CUDA reports them.
    void free(const Block& block, uint64_t bytes);
    // Hands entirely unused segments back to the device while more than `keep` is reserved.
    void release_unused(DeviceMemory& memory, uint64_t keep);
    void release_on_synchronize(DeviceMemory& memory) {
        release_unused(memory, release_threshold_);
    }

    CUresult set_attribute(CUmemPool_attribute attr, const void* value);
    CUresult get_attribute(CUmemPool_attribute attr, void* value) const;

  private:
    // How much more to reserve for `needed` bytes: whole 32 MiB steps when the device and the
    // pool's maximum allow it, else just the granules needed; 0 when not even those fit.
    uint64_t growth_for(const DeviceMemory& memory, uint64_t needed) const;
    std::optional<uint64_t> grow_in_place(DeviceMemory& memory, uint64_t size);
    std::optional<uint64_t> grow_new_segment(DeviceMemory& memory, uint64_t size);

    int device_;
    bool is_default_;
    uint64_t max_size_; // 0: limited by the device only
    uint64_t release_threshold_ = 0;
    int reuse_follow_event_dependencies_ = 1;
    int reuse_allow_opportunistic_ = 1;
    int reuse_allow_internal_dependencies_ = 1;
    uint64_t reserved_ = 0;
    uint64_t reserved_high_ = 0;
    uint64_t used_ = 0;
    uint64_t used_high_ = 0;
    uint64_t live_allocations_ = 0;
    std::map<uint64_t, RangeAllocator> segments_; // by base address
};

} // namespace cudasim

// CUmemoryPool is a pointer to this; the driver hands out MemoryPool objects under it.
struct CUmemPoolHandle_st : cudasim::MemoryPool {
    using MemoryPool::MemoryPool;
};
