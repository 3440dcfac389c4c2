// A model of PyTorch's CUDA caching allocator (the native backend of c10/cuda): it decides
// the segments itself, request by request, where analysis/caching/block_tracker.h rebuilds
// them from the ones a run recorded. Its rules (docs/whatif.md):
//
// - sizes rounded as AllocatorRules::roundSize; blocks of at most 1 MiB from the small
//   pool's 2 MiB segments, larger ones from the large pool (20 MiB segments for requests
//   below 10 MiB, else the size rounded up to 2 MiB);
// - a request takes the best-fitting free block of its stream and pool (smallest, then
//   lowest address); one of max_split_size or more serves only a request of max_split_size
//   or more, and only when it is less than the request plus 20 MiB;
// - a block larger than asked is split (AllocatorRules::splits), the rest staying free;
// - a freed block is reusable once its free completed, merged with free neighbours;
// - with no fitting block: garbage collection (garbage_collection_threshold, against the
//   capacity), a new segment; failing that at the capacity, free oversize cached blocks of
//   the stream and retry, then give every whole cached segment back (after waiting for
//   pending frees) and retry, then out of memory;
// - expandable_segments: one segment per stream and pool whose pages (2 MiB small, 20 MiB
//   large) are mapped as needed, every split allowed; giving the cache back unmaps the
//   free whole pages.
//
// The same machinery with one pool, one stream and 2 MiB pages is the stream-ordered pool
// (stream_ordered_pool.h). Every operation is O(log blocks).
#pragma once

#include "analysis/caching/allocator_rules.h"
#include "analysis/whatif/request_stream.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

namespace gmt::analyzer {

struct ModelPolicy {
    AllocatorRules rules;
    // Everything from one pool of `page_bytes` pages, every stream's free blocks shared:
    // the stream-ordered pool's approximation.
    bool one_pool = false;
    uint64_t page_bytes = 2u << 20;
};

// What the model did, up to where it stopped.
struct ModelFigures {
    uint64_t reserved_bytes = 0;
    uint64_t allocated_bytes = 0;
    uint64_t peak_reserved_bytes = 0;
    uint64_t peak_reserved_time_ns = 0;
    uint64_t peak_allocated_bytes = 0;
    // Reserved but not allocated while reserved stood at its peak (the least such).
    uint64_t fragmentation_bytes = 0;
    uint64_t cuda_malloc_calls = 0; // segments taken (cudaMalloc) or ranges mapped
    uint64_t cuda_free_calls = 0;   // segments given back or ranges unmapped
};

struct ModelOom {
    size_t request_index = 0;
    uint64_t requested_bytes = 0;
    uint64_t time_ns = 0;
    uint32_t stack = 0;
    uint32_t stream = 0;
    uint64_t reserved_bytes = 0; // when it ran out
    uint64_t allocated_bytes = 0;
};

class AllocatorModel {
  public:
    // capacity: the bytes the allocator may take from the device (none: unlimited).
    AllocatorModel(const ModelPolicy& policy, std::optional<uint64_t> capacity);

    // Applies one request; false when it ran out of memory (oom() says where): a replay
    // stops there, as the program would have.
    bool apply(const Request& r, size_t index);

    const ModelFigures& figures() const { return figures_; }
    const std::optional<ModelOom>& oom() const { return oom_; }

  private:
    struct Block {
        uint64_t size = 0;
        uint32_t segment = 0;
        uint32_t stream = 0;
        bool small = false;
        bool allocated = false;
        bool pending = false; // freed, waiting for its streams
        bool mapped = true;   // false: an expandable segment's unmapped address space
        uint64_t gc_base = 0; // the pool's free-block searches when it was cached
        uint32_t id = 0;      // the allocation it holds (allocated or pending)
    };
    struct Segment {
        uint64_t address = 0;
        uint64_t size = 0;
        bool expandable = false;
        uint64_t page = 0;
    };
    // Free blocks by (stream, size, address): the best fit is a lower_bound.
    struct FreeKey {
        uint32_t stream;
        uint64_t size;
        uint64_t address;
        auto operator<=>(const FreeKey&) const = default;
    };
    struct Pool {
        bool small = false;
        std::set<FreeKey> free;
        std::set<std::pair<uint32_t, uint64_t>> unmapped; // (stream, address)
        uint64_t searches = 0;                            // for garbage collection's ages
    };
    using BlockIt = std::map<uint64_t, Block>::iterator;
    static constexpr uint32_t kAttemptId = UINT32_MAX; // ids stop below it

    Pool& poolOf(bool small) { return small ? small_ : large_; }
    uint32_t streamOf(uint32_t stream) const { return policy_.one_pool ? 0 : stream; }
    bool smallRequest(uint64_t rounded) const {
        return !policy_.one_pool && rounded <= AllocatorRules::kSmallSize;
    }
    bool expandable() const { return policy_.one_pool || policy_.rules.expandable_segments; }
    bool oversize(uint64_t size) const { return size >= policy_.rules.max_split_size; }

    bool alloc(const Request& r, size_t index);
    void freeRequested(uint32_t id);
    void freeCompleted(uint32_t id);
    void noteChange(uint64_t time_ns);

    std::optional<BlockIt> bestFit(Pool& pool, uint32_t stream, uint64_t size);
    std::optional<BlockIt> newBlock(Pool& pool, uint32_t stream, uint64_t size);
    std::optional<BlockIt> grow(Pool& pool, uint32_t stream, uint64_t size);
    bool releaseOversize(Pool& pool, uint32_t stream, uint64_t size);
    bool releaseAll();
    void collectGarbage();

    // Blocks and their neighbours inside one segment.
    std::optional<BlockIt> prevOf(BlockIt it);
    std::optional<BlockIt> nextOf(BlockIt it);
    bool isFree(BlockIt it) const { return !it->second.allocated && !it->second.pending; }
    bool wholeSegment(BlockIt it);
    void cache(BlockIt it);   // into its pool's free or unmapped set
    void uncache(BlockIt it); // out of it
    BlockIt mergeFree(BlockIt it);
    std::optional<BlockIt> map(BlockIt it, uint64_t bytes);
    void unmap(BlockIt it);
    void releaseSegment(BlockIt it);

    ModelPolicy policy_;
    std::optional<uint64_t> capacity_;
    ModelFigures figures_;
    std::optional<ModelOom> oom_;
    Pool small_, large_;
    std::map<uint64_t, Block> blocks_; // every block of every segment, by address
    std::vector<Segment> segments_;
    std::unordered_map<uint32_t, uint64_t> live_; // allocation id -> its block's address
    std::set<uint64_t> pending_;                  // blocks freed, waiting for their streams
    uint64_t next_address_ = uint64_t{1} << 40;
    bool at_peak_ = false;
};

} // namespace gmt::analyzer
